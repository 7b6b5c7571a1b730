"""``verify`` shows the end of a dead daemon's output, saying how much came before it and
where all of it is kept (its throwaway folder is removed at teardown)."""

from __future__ import annotations

from pathlib import Path

from agentmonitors.diagnosis.verify_daemon import MAX_OUTPUT_CHARS, IsolatedDaemon


def test_a_long_daemon_output_says_what_it_left_out_and_where_the_rest_is(
    isolated_environment: Path,
) -> None:
    daemon = IsolatedDaemon(str(isolated_environment), None, "notes")
    try:
        whole = "".join(f"line {n:05} of the daemon's output\n" for n in range(400))
        Path(daemon.log_path).write_text(whole)
        shown = daemon.output()
    finally:
        daemon.remove()
    first, rest = shown.split("\n", 1)
    assert rest == whole[-MAX_OUTPUT_CHARS:]
    prefix = (
        f"… ({len(whole) - MAX_OUTPUT_CHARS} earlier characters left out; the whole output is in "
    )
    assert first.startswith(prefix) and first.endswith(")")
    kept = Path(first[len(prefix) : -1])
    assert kept.read_text() == whole  # still there after the teardown


def test_a_short_daemon_output_is_shown_whole(isolated_environment: Path) -> None:
    daemon = IsolatedDaemon(str(isolated_environment), None, "notes")
    try:
        Path(daemon.log_path).write_text("listening\n")
        assert daemon.output() == "listening\n"
    finally:
        daemon.remove()

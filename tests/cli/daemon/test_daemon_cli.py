"""``daemon once|run|start|stop|status`` and ``monitor history|explain`` as a user runs them."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE
from tests.conftest import CliResult

Run = Callable[..., CliResult]

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
  interval: 3s
---
Read the note.
"""


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("one\n")
    return root


def test_once_baselines_then_reports_a_change(workspace: Path, run_cli: Run) -> None:
    first = run_cli("daemon", "once")
    assert first.code == 0
    assert first.out == "Evaluated 1 monitor(s), emitted 0 event(s).\n"
    soon = run_cli("daemon", "once")
    assert soon.out.startswith("Evaluated 0 monitor(s), emitted 0 event(s). (1 not yet due")
    assert soon.out.rstrip().endswith("s)")
    (workspace / "notes" / "a.txt").write_text("two\n")
    # The interval leaves a loaded machine time for the "not yet due" run above.
    time.sleep(3.05)
    changed = run_cli("daemon", "once", "--format", "json")
    report = changed.json()
    assert report["evaluatedMonitors"] == ["notes"]
    assert len(report["emittedEventIds"]) == 1
    assert report["erroredObservations"] == []
    assert report["skippedMonitors"] == []


def test_once_lists_every_problem_and_still_runs_the_rest(workspace: Path, run_cli: Run) -> None:
    bad = workspace / ".claude" / "monitors" / "bad"
    bad.mkdir()
    (bad / "MONITOR.md").write_text("---\nwatch:\n  type: nope\n---\nx\n")
    result = run_cli("daemon", "once")
    # The tick ran the rest, and a failing monitor makes it exit 1, naming it on stderr.
    assert result.code == 1
    assert result.err.startswith("error: 1 monitor(s) failing: bad ")
    lines = result.out.splitlines()
    assert lines[0] == "Evaluated 1 monitor(s), emitted 0 event(s), 1 errored:"
    assert lines[1].startswith("  bad: ")
    assert "nope" in lines[1]


def test_once_with_an_explicit_monitors_folder(workspace: Path, run_cli: Run) -> None:
    other = workspace / "elsewhere"
    other.mkdir()
    result = run_cli("daemon", "once", "elsewhere", "--format", "json")
    assert result.json()["evaluatedMonitors"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--poll-ms", "0"), "--poll-ms must be a positive number."),
        (("--reap-after-ms", "-1"), "--reap-after-ms must be zero or a positive number."),
        (("--log", "x.log", "--poll-ms", "-5"), "--poll-ms must be a positive number."),
    ],
)
@pytest.mark.parametrize("command", [("run",), ("run", "--detach"), ("start",)])
def test_run_rejects_bad_flags(
    workspace: Path, run_cli: Run, args: tuple[str, ...], message: str, command: tuple[str, ...]
) -> None:
    result = run_cli("daemon", *command, *args)
    assert result.code == 1
    assert message in result.err


def test_stop_without_a_daemon_says_how_to_start_one(workspace: Path, run_cli: Run) -> None:
    result = run_cli("daemon", "stop")
    assert result.code == 1
    assert result.err.strip() == f"error: {NO_DAEMON_MESSAGE}"


def test_status_without_a_daemon_reads_the_database(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    result = run_cli("daemon", "status")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "Daemon running: no"
    assert lines[1].startswith("Socket: ")
    assert "Events: 0" in lines


@pytest.mark.slow
def test_start_status_and_stop_a_detached_daemon(workspace: Path, run_cli: Run) -> None:
    started = run_cli("daemon", "start", "--reap-after-ms", "0")
    assert started.code == 0, started.err
    lines = started.out.splitlines()
    assert lines[0] == "AgentMon daemon started in the background."
    pid = int(lines[1].split(":")[1])
    try:
        socket = lines[2].split(": ", 1)[1]
        for again in (run_cli("daemon", "start"), run_cli("daemon", "run", "--detach")):
            # Running in the background is what was asked for: not a failure.
            assert (again.code, again.err) == (0, "")
            assert again.out == (
                f"AgentMon daemon is already running.\n  Pid: {pid}\n  Socket: {socket}\n"
            )
        foreground = run_cli("daemon", "run")
        assert foreground.code == 1
        assert f"AgentMon daemon is already running at {socket}." in foreground.err
        status = run_cli("daemon", "status", "--format", "json").json()
        assert status["running"] is True
        assert status["pid"] == pid
        assert status["reapAfterMs"] == 0
        log = lines[3].split(": ", 1)[1]
        assert os.path.exists(log)
        stopped = run_cli("daemon", "stop", "--format", "json")
        assert (stopped.code, stopped.json()) == (
            0,
            {"stopped": True, "pid": pid, "socketPath": socket},
        )
        assert run_cli("daemon", "status", "--format", "json").json()["running"] is False
        again = run_cli("daemon", "stop", "--format", "json")
        assert (again.code, again.json()) == (
            1,
            {"stopped": False, "pid": None, "socketPath": socket},
        )
        assert again.err.strip() == f"error: {NO_DAEMON_MESSAGE}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


# --------------------------------------------------------------------------- monitor history


def test_history_without_daemon_or_data_explains_what_to_do(workspace: Path, run_cli: Run) -> None:
    # Nothing observed yet is an empty history, as a running daemon answers it; the
    # notice says why and how to start one.
    result = run_cli("monitor", "history", "--format", "text")
    assert (result.code, result.out) == (0, "No observation history.\n")
    assert result.err.startswith("No daemon running, and nothing has been observed here yet")
    assert "agentmonitors daemon start" in result.err
    assert run_cli("monitor", "history", "notes", "--format", "json").json() == []


def test_history_falls_back_to_the_database(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    text = run_cli("monitor", "history", "notes", "--format", "text")
    assert text.code == 0
    # The notice is about the answer: stderr, so stdout stays the listing alone.
    assert text.err == "No daemon running — showing persisted state from the last tick.\n"
    lines = text.out.splitlines()
    created, rest = lines[0].split("  ", 1)
    assert created.endswith("Z")
    assert rest == "no-change   notes  (file-fingerprint)"
    rows = run_cli("monitor", "history", "--format", "json").json()
    assert [(row["monitorId"], row["result"]) for row in rows] == [("notes", "no-change")]
    assert rows[0]["observationData"] == {"observed": 0, "emitted": 0}


def test_history_dir_flag_points_at_workspace(workspace: Path, run_cli: Run) -> None:
    result = run_cli("monitor", "history", "--dir", "x")
    assert result.code == 2  # a usage error
    assert "monitor history scopes by --workspace (the project directory), not --dir." in result.err


# --------------------------------------------------------------------------- monitor explain


def test_explain_an_unknown_id_exits_1_listing_the_known_ones(
    workspace: Path, run_cli: Run
) -> None:
    folder = workspace / ".claude" / "monitors"
    message = f'Monitor "ghost" was not found in {folder}; known ids: notes.'
    text = run_cli("monitor", "explain", "ghost", "--format", "text")
    assert (text.code, text.out, text.err) == (1, "", f"error: {message}\n")
    as_json = run_cli("monitor", "explain", "ghost", "--format", "json")
    assert (as_json.code, as_json.json()) == (1, {"error": message})


def test_explain_a_broken_definition_still_prints_the_report(workspace: Path, run_cli: Run) -> None:
    bad = workspace / ".claude" / "monitors" / "bad"
    bad.mkdir()
    (bad / "MONITOR.md").write_text("---\nwatch:\n  type: nope\n---\nx\n")
    result = run_cli("monitor", "explain", "bad", "--format", "json")
    # A failing stage is a failure: exit 1, the verdict on stderr, the report on stdout.
    assert result.code == 1
    assert result.err.startswith("error: monitor bad: Monitor definition is invalid")
    report = result.json()
    assert report["verdict"]["status"] == "failure"
    assert report["verdict"]["stage"] == "definition"


def test_explain_an_id_whose_file_is_gone_shows_its_history(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    (workspace / ".claude" / "monitors" / "notes" / "MONITOR.md").unlink()
    result = run_cli("monitor", "explain", "notes", "--format", "json")
    assert result.code == 1  # its definition is gone: the definition stage fails
    assert [row["monitorId"] for row in result.json()["observations"]] == ["notes"]


def test_explain_with_persisted_state_carries_a_notice(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    result = run_cli("monitor", "explain", "notes", "--format", "json")
    assert result.code == 0
    report = result.json()
    assert next(iter(report)) == "notice"
    assert [stage["id"] for stage in report["stages"]] == [
        "definition",
        "scheduling",
        "observation",
        "notify",
        "materialization",
        "delivery",
    ]
    text = run_cli("monitor", "explain", "notes", "--format", "text")
    assert text.err == report["notice"] + "\n"
    assert text.out.splitlines()[0] == "Monitor notes"
    assert text.out.splitlines()[-1].startswith("Verdict: ")


def test_explain_never_observed_and_nothing_stored_shows_its_stages(
    workspace: Path, run_cli: Run
) -> None:
    result = run_cli("monitor", "explain", "notes", "--format", "text")
    assert result.code == 0, result.err
    assert "Not observed yet" in result.out
    assert "error:" not in result.err

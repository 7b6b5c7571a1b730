"""``daemon once|start|stop`` and ``monitor history|explain`` name what is wrong.

Each argument a user can get wrong (a missing folder, a monitor id where a folder
goes, an id no monitor has, a folder that is not an enabled project) ends in exit 1
and one ``error:`` line naming it; a daemon's log dates its lines; durations read
as people write them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import ping
from agentmonitors.paths import resolve_socket_path
from tests.conftest import CliResult

Run = Callable[..., CliResult]

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
  interval: {interval}
---
Read the note.
"""
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES.format(interval="256200s"))
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("one\n")
    return root


# --------------------------------------------------------------------------- daemon once


def test_once_with_a_missing_workspace_names_it(workspace: Path, run_cli: Run) -> None:
    missing = str(workspace / "nope")
    result = run_cli("daemon", "once", "--workspace", missing)
    assert (result.code, result.out) == (1, "")
    assert result.err == f'error: --workspace "{missing}" does not exist.\n'
    a_file = str(workspace / "notes" / "a.txt")
    as_json = run_cli("daemon", "once", "--workspace", a_file, "--format", "json")
    assert (as_json.code, as_json.json()) == (
        1,
        {"error": f'--workspace "{a_file}" is not a folder.'},
    )


def test_once_with_a_missing_monitors_folder_names_it(workspace: Path, run_cli: Run) -> None:
    result = run_cli("daemon", "once", "missing")
    assert result.code == 1
    assert result.err == f'error: monitors folder "{workspace / "missing"}" does not exist.\n'


def test_once_without_any_monitors_folder_says_how_to_make_one(
    isolated_environment: Path, run_cli: Run
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    result = run_cli("daemon", "once")
    assert result.code == 1
    folder = isolated_environment / ".claude" / "monitors"
    assert result.err == (
        f'error: no monitors folder: "{folder}" does not exist. Create a monitor with'
        " `agentmonitors init <name> --type <type>`.\n"
    )


def test_once_given_a_monitor_id_points_at_monitor_test(workspace: Path, run_cli: Run) -> None:
    result = run_cli("daemon", "once", "notes")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        'error: "notes" is a monitor id, not a monitors folder. `daemon once` observes every'
        " due monitor of the project (run it without arguments); to try this one alone, run"
        " `agentmonitors monitor test notes`.\n"
    )
    # The project also has a notes/ folder (the watched files): it holds no monitors,
    # so the id is what was meant. What the message suggests works.
    assert (workspace / "notes").is_dir()
    suggested = run_cli("monitor", "test", "notes")
    assert suggested.code == 0, suggested.err
    assert suggested.out.startswith('Testing monitor "notes" (source: file-fingerprint)...')


def test_once_given_one_monitors_folder_or_file_points_at_monitor_test(
    workspace: Path, run_cli: Run
) -> None:
    folder = ".claude/monitors/notes"
    result = run_cli("daemon", "once", folder)
    assert result.code == 1
    assert result.err.startswith(
        f'error: "{folder}" is one monitor\'s folder, not a folder of monitors.'
    )
    assert f"`agentmonitors monitor test {folder}`" in result.err
    file = f"{folder}/MONITOR.md"
    result = run_cli("daemon", "once", file)
    assert result.err == (
        f'error: "{file}" is a file, not a monitors folder. To try one monitor, run'
        f" `agentmonitors monitor test {file}`.\n"
    )


def test_once_says_when_a_monitor_is_next_due_in_human_units(workspace: Path, run_cli: Run) -> None:
    assert run_cli("daemon", "once").code == 0
    result = run_cli("daemon", "once")
    # The interval is 256200s: due again in that much, less a moment.
    assert result.out == (
        "Evaluated 0 monitor(s), emitted 0 event(s). (1 not yet due — next due in 2d 23h)\n"
    )


# --------------------------------------------------------------------------- history


def test_history_of_an_unknown_id_says_so(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    result = run_cli("monitor", "history", "ghost", "--format", "text")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        'error: Unknown monitor id "ghost": no monitor file defines it and it has no history'
        " (known ids: notes).\n"
    )
    as_json = run_cli("monitor", "history", "ghost", "--format", "json")
    assert as_json.code == 1
    assert as_json.json()["error"].startswith('Unknown monitor id "ghost"')


def test_history_of_an_id_whose_file_is_gone_is_still_shown(workspace: Path, run_cli: Run) -> None:
    run_cli("daemon", "once")
    (workspace / ".claude" / "monitors" / "notes" / "MONITOR.md").unlink()
    rows = run_cli("monitor", "history", "notes", "--format", "json")
    assert rows.code == 0
    assert [row["monitorId"] for row in rows.json()] == ["notes"]


# --------------------------------------------------------------------------- start


def test_start_outside_an_enabled_project_refuses(isolated_environment: Path, run_cli: Run) -> None:
    monitors = isolated_environment / ".claude" / "monitors" / "x"
    monitors.mkdir(parents=True)
    (monitors / "MONITOR.md").write_text(NOTES.format(interval="1m"))
    for args in (("daemon", "start"), ("daemon", "run", "--detach")):
        result = run_cli(*args)
        assert (result.code, result.out) == (1, "")
        assert result.err == (
            f'error: "{isolated_environment}" is not an enabled project, so no daemon is'
            " started for it. Run `agentmonitors init --enable-only` in the project root"
            " first (or pass --workspace <project root>).\n"
        )
    assert not ping(resolve_socket_path(str(isolated_environment)))


def _field(lines: list[str], name: str) -> str:
    return next(line.split(": ", 1)[1] for line in lines if line.startswith(f"  {name}: "))


@pytest.mark.slow
def test_a_started_daemon_dates_its_log_knows_its_ids_and_speaks_in_human_durations(
    workspace: Path, run_cli: Run
) -> None:
    started = run_cli("daemon", "start")
    assert started.code == 0, started.err
    lines = started.out.splitlines()
    pid = int(_field(lines, "Pid"))
    try:
        assert _field(lines, "Reaping") == "stops after 5m idle"
        status = run_cli("daemon", "status").out.splitlines()
        assert "Reaping: stops after 5m idle" in status
        uptime = next(line for line in status if line.startswith("Uptime: "))
        assert re.fullmatch(r"Uptime: \d+s|Uptime: \d+ms", uptime)
        # With a daemon answering, an unknown id is still an error naming it.
        explained = run_cli("monitor", "explain", "ghost", "--format", "json")
        assert (explained.code, list(explained.json())) == (1, ["error"])
        assert explained.json()["error"].startswith('Monitor "ghost" was not found')
        history = run_cli("monitor", "history", "ghost", "--format", "json")
        assert history.code == 1
        assert history.json()["error"].startswith('Unknown monitor id "ghost"')
        log = Path(_field(lines, "Log"))
        assert run_cli("daemon", "stop").code == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        written = log.read_text().splitlines()
        assert any("AgentMon daemon listening on" in line for line in written)
        assert written and all(STAMP.match(line) for line in written), written
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def _alive(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# --------------------------------------------------------------------------- backoff


DOWN = """---
watch:
  type: api-poll
  url: http://127.0.0.1:9/down
  interval: 1s
---
The service answered.
"""


def once(workspace: Path, *extra: str) -> dict[str, Any]:
    """The JSON report of a real ``daemon once`` process."""
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "daemon", "once", *extra, "--format", "json"],
        cwd=workspace,
        env={**os.environ, "PWD": str(workspace)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    # Failing monitors (errored now, or backing off after failures) make the tick exit 1
    # with one line naming them; a tick without them exits 0.
    assert done.returncode == (1 if "monitor(s) failing" in done.stderr else 0), done.stderr
    return report


def errored(report: dict[str, Any]) -> list[str]:
    return [item["monitorId"] for item in report["erroredObservations"]]


@pytest.mark.slow
def test_once_keeps_a_failing_monitors_backoff_unless_forced(
    isolated_environment: Path, run_cli: Run
) -> None:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "down"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(DOWN)
    # Written a while ago: an edit after the last failure would end the backoff.
    past = time.time() - 60
    os.utime(folder / "MONITOR.md", (past, past))
    # A project monitor that fetches a URL runs once the user approved it.
    assert run_cli("monitor", "approve", "--yes", "down").code == 0

    failing = run_cli("daemon", "once", "--format", "json")
    assert (failing.code, failing.err.splitlines()[-1]) == (
        1,
        "error: 1 monitor(s) failing: down (the report says why; `agentmonitors monitor"
        " explain <id>` shows one)",
    )
    first = failing.json()
    assert errored(first) == ["down"]
    # Within the 5 s backoff, --force tries it anyway.
    forced = once(root, "--force")
    assert (forced["evaluatedMonitors"], errored(forced)) == (["down"], ["down"])
    # Two failures in a row: the next process waits 10 s from the last one, though an
    # errored monitor (nothing stored) is always due by its interval.
    waiting = once(root)
    assert (waiting["evaluatedMonitors"], errored(waiting)) == ([], [])
    assert [item["monitorId"] for item in waiting["skippedMonitors"]] == ["down"]
    text = run_cli("daemon", "once")
    assert text.out.splitlines()[1].startswith(
        "  down: backing off after 2 failure(s) in a row; next try in "
    )
    assert text.out.rstrip().endswith("(--force tries it now)")
    # Editing the monitor's file ends its backoff: the edit may be the fix.
    (folder / "MONITOR.md").write_text(DOWN.replace("/down", "/still-down"))
    edited = once(root)
    assert (edited["evaluatedMonitors"], errored(edited)) == (["down"], ["down"])

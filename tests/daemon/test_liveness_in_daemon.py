"""Silence and failures reach the agent: a real daemon, its clock set by the test.

The daemon runs in its own process on its real socket and SQLite database; the session
is opened and prompted through the real hook commands (Claude Code's payloads on
stdin), and the events are listed with the CLI, as an agent in the project does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.transports.clocked_project import Project, agentmonitors_in
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]

HEARTBEAT = """---
name: CI heartbeat
watch:
  type: file-fingerprint
  globs: "ci/*.txt"
  interval: 1d
urgency: high
expect:
  change-within: 1h
---
The CI job writes ci/beat.txt on every run.
"""

CHECK = """
import pathlib, sys
state = pathlib.Path(sys.argv[1]).read_text().strip()
if state.startswith("broken"):
    sys.stderr.write("upstream refused: " + state + "\\n")
    sys.exit(3)
print("release:", state)
"""


@pytest.fixture
def project(isolated_environment: Path, tmp_path: Path, run_cli: Run) -> Iterator[Project]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    daemon = ClockedDaemon(root, tmp_path / "clock")
    yield Project(root, daemon)
    if daemon.process is not None:
        daemon.process.kill()
        daemon.process.communicate(timeout=10)


def add_monitor(root: Path, monitor_id: str, text: str) -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(text)
    assert main(["monitor", "approve", "--yes", "--all", "--workspace", str(root)]) == 0


def listed(project: Project, session: str) -> list[dict[str, Any]]:
    code, out, err = agentmonitors_in(
        project.root, "events", "list", "--session", session, "--format", "json"
    )
    assert code == 0, err
    return list(json.loads(out))


def explained(project: Project, monitor_id: str, code: int = 0) -> str:
    """The liveness line of ``monitor explain``, as the daemon answers it (the command
    exits 1 while the latest observation failed)."""
    exited, out, err = agentmonitors_in(project.root, "monitor", "explain", monitor_id)
    assert exited == code, err
    (line,) = [line for line in out.splitlines() if line.startswith("• Liveness")]
    return line


def delivered(project: Project, host: str) -> str:
    """What ``hook deliver`` hands Claude Code at the next prompt (its context)."""
    out, _err = project.prompt(host, "what next?")
    if not out.strip():
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def test_a_silent_heartbeat_reaches_the_session_once_per_silence(project: Project) -> None:
    (project.root / "ci").mkdir()
    (project.root / "ci" / "beat.txt").write_text("run 1\n")
    add_monitor(project.root, "heartbeat", HEARTBEAT)
    daemon = project.daemon
    daemon.start()  # the first observation is the baseline: the window starts there
    session = project.start_session("host-1")

    daemon.advance(59 * 60)
    daemon.tick()
    assert listed(project, session) == []
    assert explained(project, "heartbeat") == (
        "• Liveness: expects a change within 1h; first observation at 2026-12-01T10:20:00.000Z;"
        " silent after 2026-12-01T11:20:00.000Z (in 1m)"
    )

    daemon.advance(61)
    daemon.tick()
    (silence,) = listed(project, session)
    assert silence["title"] == "CI heartbeat has not changed in 1h"
    assert silence["objectKey"] == "agentmonitors:silence"
    assert silence["queryScope"] == {"liveness": "silent"}
    assert silence["urgency"] == "high"
    assert silence["monitorId"] == "heartbeat"

    daemon.advance(16)  # past the high-urgency settle
    context = delivered(project, "host-1")
    assert "CI heartbeat has not changed in 1h" in context
    assert silence["id"] in context

    assert explained(project, "heartbeat") == (
        "• Liveness: expects a change within 1h; first observation at 2026-12-01T10:20:00.000Z;"
        " silent, said at 2026-12-01T11:20:01.000Z (the next change ends it)"
    )

    # Still silent: no second event.
    daemon.advance(5 * 3600)
    daemon.tick()
    assert len(listed(project, session)) == 1

    # A real change ends the silence; an hour later the next silence is news again.
    (project.root / "ci" / "beat.txt").write_text("run 2\n")
    for _ in range(6):
        daemon.advance(31)
        daemon.tick()
        if len(listed(project, session)) == 2:
            break
    assert listed(project, session)[0]["title"] == "CI heartbeat"
    daemon.advance(3601)
    daemon.tick()
    titles = [event["title"] for event in listed(project, session)]
    assert titles == [
        "CI heartbeat has not changed in 1h",
        "CI heartbeat",
        "CI heartbeat has not changed in 1h",
    ]


def test_the_daemon_wakes_itself_for_a_silence_across_a_restart(project: Project) -> None:
    """No tick is asked for: the daemon's own schedule wakes it at the deadline, and
    after a restart the window still runs from the stored baseline."""
    (project.root / "ci").mkdir()
    (project.root / "ci" / "beat.txt").write_text("run 1\n")
    add_monitor(project.root, "heartbeat", HEARTBEAT)
    daemon = project.daemon
    daemon.start()
    daemon.stop()

    daemon.set_time(START_MS + 3600_000 - 2_000)
    rows = len(daemon.results("heartbeat"))
    daemon.start()
    # The restarted daemon's reconcile tick, two seconds before the deadline.
    wait_for(lambda: len(daemon.results("heartbeat")) > rows, timeout=30)
    assert daemon.new_events() == []
    daemon.set_time(START_MS + 3600_000 + 1_000)
    wait_for(lambda: daemon.query("SELECT 1 FROM monitor_events"), timeout=15)
    assert daemon.new_events() == [
        ("heartbeat", "CI heartbeat has not changed in 1h", "agentmonitors:silence")
    ]


def test_three_failed_runs_reach_the_session_and_so_does_the_recovery(project: Project) -> None:
    (project.root / "check.py").write_text(CHECK)
    state = project.root / "state.txt"
    state.write_text("v1")
    add_monitor(
        project.root,
        "release",
        f"""---
name: Release check
watch:
  type: command-poll
  command: ['{sys.executable}', check.py, state.txt]
  interval: 1m
urgency: high
---
Tell the user when the release changes.
""",
    )
    daemon = project.daemon
    daemon.start()
    session = project.start_session("host-1")

    state.write_text("broken\nsecond line \u202e")
    for _ in range(2):
        daemon.advance(60)
        daemon.tick()
    liveness = [e for e in listed(project, session) if e["objectKey"] == "agentmonitors:health"]
    assert liveness == []
    daemon.advance(60)
    daemon.tick()
    (failing,) = [e for e in listed(project, session) if e["objectKey"] == "agentmonitors:health"]
    assert failing["title"].startswith("Release check has failed 3 times: ")
    # The reason, as untrusted text: one line, its invisible characters escaped.
    assert failing["title"] == (
        "Release check has failed 3 times: exit status 3: second line \\u202e"
    )
    assert failing["queryScope"] == {"liveness": "failing"}
    assert failing["payload"] == {"liveness": "failing", "failures": 3}

    code, out, err = agentmonitors_in(
        project.root, "events", "list", "--session", session, "--scope", "liveness=failing",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert [event["id"] for event in json.loads(out)] == [failing["id"]]

    daemon.advance(16)
    code, out, err = agentmonitors_in(project.root, "inspect", "--session", session)
    assert code == 0, err
    assert f"{failing['id']}  release  high  Release check has failed 3 times: " in out
    context = delivered(project, "host-1")
    assert "Release check has failed 3 times: " in context
    assert "\u202e" not in context

    assert explained(project, "release", code=1) == (
        "• Liveness: 3 failed observation(s) in a row (the sessions were told)"
    )

    # Still failing: nothing more from liveness.
    for _ in range(3):
        daemon.advance(300)
        daemon.tick()
    health = [e for e in listed(project, session) if e["objectKey"] == "agentmonitors:health"]
    assert len(health) == 1

    state.write_text("v1")
    daemon.advance(300)
    daemon.tick()
    health = [e for e in listed(project, session) if e["objectKey"] == "agentmonitors:health"]
    assert [e["title"] for e in health] == [
        "Release check recovered after 6 failures",
        failing["title"],
    ]
    assert health[0]["queryScope"] == {"liveness": "recovered"}
    daemon.advance(16)
    assert "Release check recovered after 6 failures" in delivered(project, "host-1")

"""Retention: the running daemon prunes what is done with after the age the user set.

A real daemon process with a test-set clock over a real SQLite file; sessions open,
read and end through Claude Code's exact hook payloads; the clock moves a week on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.workspace import enable_file_path
from tests.transports.clocked_project import Project, clocked_project  # noqa: F401
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

DAY_S = 86_400


def status(project: Project) -> dict[str, Any]:
    code, out, err = project.hook(["daemon", "status", "--format", "json"], {})
    assert code == 0, err
    database = json.loads(out)["database"]
    assert isinstance(database, dict)
    return database


def pass_after_tick(project: Project) -> dict[str, Any]:
    """Tick, and wait for the retention pass that tick started to finish."""
    before = status(project)["retention"]["lastPass"]
    project.daemon.tick()
    wait_for(lambda: status(project)["retention"]["lastPass"] != before)
    last = status(project)["retention"]["lastPass"]
    assert isinstance(last, dict)
    return last


def read(project: Project, host: str) -> str:
    """A prompt delivers the high event; the agent acknowledges what it was shown."""
    out, _err = project.prompt(host, "next")
    session = project.session_id(host)
    code, _ack, err = project.hook(["events", "ack", "--session", session], {})
    assert code == 0, err
    return out


def count(project: Project, table: str) -> int:
    return int(project.daemon.query(f"SELECT COUNT(*) FROM {table}")[0][0])


def test_acknowledged_events_and_ended_sessions_go_after_a_week_and_unread_ones_stay(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    project.start_session("reader")
    project.start_session("leaver")
    first = project.settled_change("one\n")
    read(project, "reader")
    project.start_session("late")  # sees only what comes after it opened
    second = project.settled_change("two\n")
    read(project, "reader")
    code, _out, err = project.hook(["session", "end"], project.payload("SessionEnd", "leaver"))
    assert code == 0, err
    third = project.settled_change("three\n")
    read(project, "reader")
    assert set(project.states("reader").values()) == {"acknowledged"}
    assert project.states_any() == [first, second, third]
    history = count(project, "observation_history")
    snapshots = count(project, "monitor_snapshots")  # the baseline and one per event
    assert snapshots == 4

    # Six days on, everything is younger than the default week: nothing goes.
    daemon.advance(6 * DAY_S)
    assert pass_after_tick(project)["removed"] == {}
    assert project.states_any() == [first, second, third]

    # Eight days on: the ended session goes with its unread rows; the first event,
    # read by everyone still here, goes with its snapshot; the second stays, since the
    # late session has not read it; the third is the newest of its note (the base of
    # the next diff) and stays.
    daemon.advance(2 * DAY_S)
    removed = pass_after_tick(project)["removed"]
    assert project.states_any() == [second, third]
    hosts = {row[0] for row in daemon.query("SELECT host_session_id FROM agent_sessions")}
    assert hosts == {"reader", "late"}
    assert removed["agent_sessions"] == 1 and removed["monitor_events"] == 1
    assert count(project, "monitor_snapshots") == 2
    assert count(project, "observation_history") < history
    assert count(project, "observation_history") >= 2  # the newest and the first success

    # What the late session has not read is still delivered, in full.
    assert "Read the changed note." in read(project, "late")
    assert set(project.states("late").values()) == {"acknowledged"}

    # `doctor` shows the size and the oldest event kept, and checks the file.
    code, out, err = project.hook(["doctor", "--format", "json"], {})
    report = json.loads(out)
    (check,) = [item for item in report["checks"] if item["name"] == "database"]
    assert check["status"] == "pass", check
    assert "oldest event 2026-12-0" in check["detail"]
    assert "keeps what is done with 7d" in check["detail"]
    assert report["database"]["quickCheck"] == "ok"
    assert report["database"]["sizeBytes"] > 0
    code, text, err = project.hook(["daemon", "status"], {})
    assert code == 0, err
    assert "Database size: " in text and ", keeps what is done with 7d" in text


def test_the_age_is_the_enable_files_retention_and_off_keeps_everything(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    project.start_session("reader")
    first = project.settled_change("one\n")
    second = project.settled_change("two\n")
    read(project, "reader")

    enable = Path(enable_file_path(project.ws))
    text = enable.read_text()
    enable.write_text(text.replace("enabled: true", "enabled: true\nretention: off", 1))
    daemon.advance(30 * DAY_S)
    assert pass_after_tick(project)["removed"] == {}
    assert status(project)["retention"]["keepMs"] == 0
    assert project.states_any() == [first, second]

    enable.write_text(text.replace("enabled: true", "enabled: true\nretention: 2h", 1))
    daemon.advance(3600)
    removed = pass_after_tick(project)["removed"]
    assert removed["monitor_events"] == 1
    assert project.states_any() == [second]
    assert status(project)["retention"]["keepMs"] == 2 * 3_600_000

    enable.write_text(text.replace("enabled: true", "enabled: true\nretention: soon", 1))
    daemon.advance(3600)
    pass_after_tick(project)
    problem = status(project)["retention"]["problem"]
    assert "retention: 'soon'" in problem and str(enable) in problem
    code, text, err = project.hook(["daemon", "status"], {})
    assert code == 0, err
    assert f"Retention: {problem}" in text

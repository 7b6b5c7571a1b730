"""A baseline keeps each object's text, so the first change after it is shown as a diff.

Driven as a user would: a project with a monitor of each source that produces a
snapshot text, approved, observed by real ``daemon once`` runs; the diff the agent
reads comes from the real ``diff`` verb and the real hook of a session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.security.hostile import RecordingServer, add_monitor, agentmonitors, once_json
from tests.sources.test_incoming_changes import Repos
from tests.waiting import wait_for

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow


POLLER = "---\nwatch:\n  type: command-poll\n  command: [cat, out.txt]\n  interval: 1s\n---\nAct.\n"


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    (isolated_environment / ".claude" / "monitors").mkdir()
    return isolated_environment


def diff_json(root: Path, monitor_id: str, key: str) -> dict[str, Any]:
    done = agentmonitors(root, "diff", monitor_id, "--object", key, "--format", "json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def first_event(root: Path) -> list[str]:
    """The events of the first ``daemon once`` after the monitor's 1 s interval."""
    ids: list[str] = wait_for(lambda: once_json(root)["emittedEventIds"], step=0.3)
    return ids


def test_command_poll_first_change_is_a_diff(project: Path) -> None:
    (project / "out.txt").write_text("alpha\nbeta\n")
    add_monitor(
        project,
        "poller",
        POLLER,
    )
    assert agentmonitors(project, "monitor", "approve", "--yes", "poller").returncode == 0
    assert once_json(project)["emittedEventIds"] == []  # the baseline
    (project / "out.txt").write_text("alpha\ngamma\n")
    first_event(project)
    result = diff_json(project, "poller", "cat out.txt")
    assert result["diff"] == "- 2: beta\n+ 2: gamma"
    assert result["from"]["baseline"] is True


def test_file_fingerprint_first_change_is_a_diff(project: Path) -> None:
    (project / "notes").mkdir()
    (project / "notes" / "a.txt").write_text("one\ntwo\n")
    add_monitor(
        project,
        "notes",
        "---\nwatch:\n  type: file-fingerprint\n  globs: 'notes/*.txt'\n  interval: 1s\n"
        "urgency: low\n---\nRead.\n",
    )
    assert once_json(project)["emittedEventIds"] == []  # the baseline
    (project / "notes" / "a.txt").write_text("one\nthree\n")
    (event,) = first_event(project)
    key = str(project / "notes" / "a.txt")
    assert diff_json(project, "notes", key)["diff"] == "- 2: two\n+ 2: three"
    shot = agentmonitors(project, "snapshot", "notes", "--object", key, "--format", "text")
    assert shot.returncode == 0 and f"event {event}" in shot.stdout


def test_api_poll_first_change_is_a_diff(project: Path) -> None:
    bodies = ["status: green\nbuild: 1\n", "status: red\nbuild: 2\n"]
    with RecordingServer(answer=lambda n: bodies[min(n, 2) - 1]) as server:
        add_monitor(
            project,
            "api",
            "---\nwatch:\n  type: api-poll\n"
            f"  url: {server.url('/status')}\n  interval: 1s\n"
            "  change-detection:\n    strategy: text-diff\n---\nReact.\n",
        )
        assert agentmonitors(project, "monitor", "approve", "--yes", "api").returncode == 0
        assert once_json(project)["emittedEventIds"] == []  # the baseline
        first_event(project)
    result = diff_json(project, "api", server.url("/status"))
    assert result["diff"] == "- 1: status: green\n+ 1: status: red\n- 2: build: 1\n+ 2: build: 2"


def test_the_snapshot_verb_names_a_baseline_as_such(project: Path) -> None:
    (project / "out.txt").write_text("kept\n")
    add_monitor(
        project,
        "poller",
        POLLER,
    )
    assert agentmonitors(project, "monitor", "approve", "--yes", "poller").returncode == 0
    once_json(project)
    shot = agentmonitors(project, "snapshot", "poller", "--format", "json")
    assert shot.returncode == 0, shot.stderr
    body = json.loads(shot.stdout)
    assert (body["content"], body["eventId"], body["baseline"]) == ("kept\n", None, True)
    text = agentmonitors(project, "snapshot", "poller", "--format", "text")
    assert "baseline (before any event)" in text.stdout


def test_incoming_changes_first_change_is_a_diff(tmp_path: Path) -> None:
    (tmp_path / "git").mkdir()
    repos = Repos(tmp_path / "git")
    ws = repos.ws
    assert agentmonitors(ws, "init", "--enable-only").returncode == 0
    add_monitor(
        ws,
        "upstream",
        "---\nwatch:\n  type: incoming-changes\n  paths: ['docs/**']\n  interval: 1s\n---\nRead.\n",
    )
    assert agentmonitors(ws, "monitor", "approve", "--yes", "upstream").returncode == 0
    assert once_json(ws)["emittedEventIds"] == []  # the baseline: a commit
    repos.push("docs", docs__a_md="alpha 2\n")
    repos.pull()
    first_event(ws)
    assert diff_json(ws, "upstream", "docs/a.md")["diff"] == "- 1: alpha\n+ 1: alpha 2"

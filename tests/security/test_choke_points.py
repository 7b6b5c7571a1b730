"""Hole 1 (second half) and hole 12: approval is checked where the action happens.

However a declaration got in (a row planted in the store, an agent's ``watch
declare``), its command does not start, its request is not sent and its outside files
are not read unless the user approved exactly that.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.paths import resolve_db_path
from tests.conftest import CliResult
from tests.security.hostile import agentmonitors, blocked_ids, files_holding, once_json

Run = Callable[..., CliResult]
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    (isolated_environment / ".claude" / "monitors").mkdir()
    return isolated_environment


def plant_watch(root: Path, watch_id: str, source: str, scope: dict[str, object]) -> None:
    """A watch row written straight into the workspace's store, as a hostile writer would."""
    once_json(root)  # the store exists
    with sqlite3.connect(resolve_db_path(str(root))) as conn:
        conn.execute(
            "INSERT INTO ephemeral_monitors (id, session_id, workspace_path, source_name,"
            " scope, urgency, urgency_max, instruction, display_name, status, created_at,"
            " updated_at) VALUES (?, 's', ?, ?, ?, 'normal', 'normal', '', NULL, 'active',"
            " 1, 1)",
            (watch_id, str(root), source, json.dumps(scope)),
        )


@pytest.mark.slow
def test_a_command_planted_in_the_store_never_runs(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    plant_watch(
        project,
        "ephemeral:s/planted",
        "command-poll",
        {"command": ["sh", "-c", f"touch {marker}"], "interval": "1s"},
    )
    report = once_json(project)
    assert "ephemeral:s/planted" in blocked_ids(report)
    assert "ephemeral:s/planted" not in report["evaluatedMonitors"]
    assert not marker.exists()


@pytest.mark.slow
def test_a_planted_watch_of_the_users_keys_reads_nothing(project: Path, tmp_path: Path) -> None:
    ssh = Path.home() / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text(PRIVATE_KEY)
    plant_watch(project, "ephemeral:s/keys", "file-fingerprint", {"globs": f"{ssh}/*"})
    report = once_json(project)
    assert "ephemeral:s/keys" in blocked_ids(report)
    (ssh / "id_ed25519").write_text(PRIVATE_KEY + "changed\n")
    once_json(project)
    assert files_holding(Path(resolve_db_path(str(project))).parent, b"PRIVATE KEY") == []


@pytest.mark.slow
def test_an_agents_watch_that_runs_a_command_waits_for_the_user(
    project: Path, tmp_path: Path
) -> None:
    from tests.daemon.test_watches import WatchDaemon

    marker = tmp_path / "agent-ran"
    daemon = WatchDaemon(project, tmp_path / "clock")
    daemon.start()
    try:
        opened = agentmonitors(
            project, "session", "open", "--host-session-id", "h", "--format", "id"
        )
        session = opened.stdout.strip()
        scope = json.dumps({"command": ["sh", "-c", f"touch {marker}"], "interval": "1s"})
        declared = agentmonitors(
            project,
            "watch",
            "command-poll",
            "--session",
            session,
            "--scope",
            scope,
            "--format",
            "json",
            env={"CLAUDECODE": "1"},
        )
        assert declared.returncode == 0, declared.stderr
        record = json.loads(declared.stdout)
        assert "monitor approve" in record["awaitingApproval"]
        daemon.tick()
        daemon.advance(5)
        daemon.tick()
        assert not marker.exists()
        # The agent cannot approve it itself ...
        refused = agentmonitors(
            project, "monitor", "approve", "--yes", record["id"], env={"CLAUDECODE": "1"}
        )
        assert refused.returncode == 1
        assert "user's act" in refused.stderr
        # ... the user can, and then it runs.
        approved = agentmonitors(project, "monitor", "approve", "--yes", record["id"])
        assert approved.returncode == 0, approved.stderr
        daemon.advance(5)
        daemon.tick()
        from tests.waiting import wait_for

        wait_for(marker.exists)
    finally:
        if daemon.process is not None:
            daemon.process.kill()
            daemon.process.communicate(timeout=10)


@pytest.mark.slow
def test_an_agents_watch_inside_the_project_runs_at_once(project: Path, tmp_path: Path) -> None:
    from tests.daemon.test_watches import WatchDaemon
    from tests.waiting import wait_for

    (project / "status.txt").write_text("pending\n")
    daemon = WatchDaemon(project, tmp_path / "clock")
    daemon.start()
    try:
        opened = agentmonitors(
            project, "session", "open", "--host-session-id", "h", "--format", "id"
        )
        scope = json.dumps({"globs": ["status.txt"], "interval": "1s"})
        declared = agentmonitors(
            project,
            "watch",
            "file-fingerprint",
            "--session",
            opened.stdout.strip(),
            "--scope",
            scope,
            "--format",
            "json",
        )
        record = json.loads(declared.stdout)
        assert "awaitingApproval" not in record
        daemon.tick()
        wait_for(lambda: daemon.observations(record["id"]) >= 1)
    finally:
        if daemon.process is not None:
            daemon.process.kill()
            daemon.process.communicate(timeout=10)

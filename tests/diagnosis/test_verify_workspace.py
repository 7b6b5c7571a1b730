"""``verify --use-workspace-daemon``: the real daemon is used and kept, real sessions untouched."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.diagnosis.verify_helpers import agentmonitors, process_alive, scaffold, verify
from tests.waiting import wait_for


@pytest.fixture
def enabled_project(isolated_environment: Path) -> Iterator[Path]:
    work = isolated_environment
    done = agentmonitors(work, "init", "--enable-only")
    assert done.returncode == 0, done.stderr
    yield work
    agentmonitors(work, "daemon", "stop")


@pytest.mark.slow
def test_a_scratch_change_is_retracted_and_tombstoned(
    enabled_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = enabled_project
    # A temporary folder of this test's own: other tests running beside it make
    # ``amv-*`` folders in the shared one.
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    scaffold(
        work,
        "ts-files",
        "file-fingerprint",
        {r"'\*\*/\*\.ts'": "'src/**/*.ts'", r"# interval: 30s": "interval: 1s"},
    )
    assert agentmonitors(work, "daemon", "start").returncode == 0
    socket = resolve_socket_path(str(work))
    # A real session of the user's, open before the run.
    real = call(socket, "session.open", {"hostSessionId": "real-1", "workspacePath": str(work)})

    result = verify(work, "ts-files", "--use-workspace-daemon")

    assert result.code == 0, result.out + result.err
    assert result.report["ok"] is True
    assert result.stage("daemon")["detail"].startswith("the workspace daemon, pid ")
    pid = result.daemon_pid
    assert pid is not None and process_alive(pid)
    assert ping(socket)
    assert not list((work / "src").glob("agentmonitors-verify-*"))
    # Nothing of the run stays for the real session, and the scratch key is tombstoned.
    assert call(socket, "events.list", {"monitorId": "ts-files"}) == []
    assert call(socket, "events.list", {"sessionId": real["id"], "unreadOnly": True}) == []
    with sqlite3.connect(resolve_db_path(str(work))) as conn:
        keys = [row[0] for row in conn.execute("SELECT object_key FROM object_event_suppressions")]
    assert len(keys) == 1 and "agentmonitors-verify-" in keys[0]
    # Its hook state lives in the one shared file of the data folder, not in /tmp.
    assert list(private_tmp.glob("amv-*")) == []
    # The throwaway lead was closed.
    sessions = call(socket, "session.list", {})
    assert [item["hostSessionId"] for item in sessions if item["status"] == "active"] == ["real-1"]


def test_a_disabled_workspace_is_a_setup_failure(isolated_environment: Path) -> None:
    work = isolated_environment
    scaffold(work, "ts-files", "file-fingerprint", {r"# interval: 30s": "interval: 1s"})

    result = verify(work, "ts-files", "--use-workspace-daemon")

    assert result.code == 1
    assert result.report["failure"]["kind"] == "setup"
    assert "monitoring is disabled" in result.report["failure"]["message"]


def test_suppress_object_refuses_a_real_file(enabled_project: Path) -> None:
    work = enabled_project
    assert agentmonitors(work, "daemon", "start").returncode == 0
    socket = resolve_socket_path(str(work))
    from agentmonitors.daemon.client import DaemonApplicationError

    with pytest.raises(DaemonApplicationError, match="not a verify scratch object"):
        call(
            socket,
            "events.suppressObject",
            {"monitorId": "m", "objectKey": str(work / "main.ts"), "ttlMs": 60_000},
        )
    with pytest.raises(DaemonApplicationError, match="objectKey or eventIds"):
        call(socket, "events.retractObject", {"monitorId": "m"})
    assert call(socket, "events.retractObject", {"monitorId": "m", "eventIds": ["x"]}) == {
        "ok": True,
        "retracted": 0,
    }


@pytest.mark.slow
def test_a_real_files_events_are_retracted_by_id(enabled_project: Path) -> None:
    work = enabled_project
    notes = work / "NOTES.md"
    notes.write_text("keep me\n")
    scaffold(
        work,
        "notes",
        "file-fingerprint",
        {r"'\*\*/\*\.ts'": "'NOTES.md'", r"# interval: 30s": "interval: 1s"},
    )

    result = verify(work, "notes", "--use-workspace-daemon")

    assert result.code == 0, result.out + result.err
    assert result.stage("trigger")["detail"] == "edited NOTES.md (restored afterwards)"
    assert notes.read_text() == "keep me\n"
    socket = resolve_socket_path(str(work))
    # The edit's event and the restore's are both gone; no tombstone on a real file.
    assert call(socket, "events.list", {"monitorId": "notes"}) == []
    with sqlite3.connect(resolve_db_path(str(work))) as conn:
        assert conn.execute("SELECT COUNT(*) FROM object_event_suppressions").fetchone() == (0,)
    # The user's own later change to the file is still reported.
    notes.write_text("changed by the user\n")
    events = wait_for(lambda: call(socket, "events.list", {"monitorId": "notes"}), timeout=20)
    assert len(events) == 1


@pytest.mark.slow
@pytest.mark.parametrize("literal", [False, True], ids=["scratch-file", "real-file"])
def test_a_throwaway_run_beside_the_workspace_daemon_leaves_real_sessions_alone(
    enabled_project: Path, literal: bool
) -> None:
    """Without --use-workspace-daemon the run has its own daemon, but the workspace's own
    daemon (running for the user's session) sees the same trigger: it must not reach the
    user's session, whether the trigger is a scratch file or an edit of a real file."""
    work = enabled_project
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    glob = "'src/main.ts'" if literal else "'src/**/*.ts'"
    scaffold(
        work,
        "ts-files",
        "file-fingerprint",
        # High urgency: the run waits out the 15 s settle, so the workspace daemon (every
        # second) surely observes the trigger while it is in place.
        {
            r"'\*\*/\*\.ts'": glob,
            r"# interval: 30s": "interval: 1s",
            r"^urgency: normal": "urgency: high",
        },
    )
    assert agentmonitors(work, "daemon", "start").returncode == 0
    socket = resolve_socket_path(str(work))
    real = call(socket, "session.open", {"hostSessionId": "real-1", "workspacePath": str(work)})
    wait_for(lambda: call(socket, "history.list", {"monitorId": "ts-files"}))
    observed = len(call(socket, "history.list", {"monitorId": "ts-files", "limit": 200}))

    result = verify(work, "ts-files")

    assert result.code == 0, result.out + result.err
    assert result.stage("daemon")["detail"].startswith("a throwaway daemon, pid ")
    assert (work / "src" / "main.ts").read_text() == "export {}\n"
    assert not list((work / "src").glob("agentmonitors-verify-*"))
    # The workspace daemon watched the whole run (it polls every second here); let it
    # observe the revert too.
    seen = len(call(socket, "history.list", {"monitorId": "ts-files", "limit": 200}))
    assert seen >= observed + 10
    wait_for(
        lambda: (
            len(call(socket, "history.list", {"monitorId": "ts-files", "limit": 200})) >= seen + 2
        )
    )
    assert call(socket, "events.list", {"sessionId": real["id"], "unreadOnly": True}) == []
    assert call(socket, "events.list", {"monitorId": "ts-files"}) == []

"""The per-process and per-thread records in the user's data folder go once stale.

A real daemon with a test-set clock; Claude Code and Codex sessions start through their
real hooks (which write the records), and the clock moves past the retention age. The
daemon's retention pass removes a record whose Claude Code process is gone, and a Codex
thread's record once no session the store keeps runs it, each only once older than the
age; nothing on the hook path removes anything.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.codex_home import session_home
from agentmonitors.delivery.host_process import current_session
from agentmonitors.workspace import data_root
from tests.store.test_retention_in_daemon import pass_after_tick
from tests.transports.clocked_project import Project, clocked_project  # noqa: F401
from tests.transports.test_codex_hooks import fixture, run_hook

pytestmark = pytest.mark.slow

DAY_S = 86_400


def codex_hook(project: Project, command: list[str], name: str, thread: str) -> None:
    payload: dict[str, Any] = fixture(name, project)
    payload["session_id"] = thread
    code, _out, err = run_hook(project, [*command, "--host", "codex"], json.dumps(payload).encode())
    assert code == 0, err


def records(folder: str) -> set[str]:
    return set(os.listdir(folder))


def test_records_go_once_their_process_or_thread_is_done_and_older_than_the_age(
    clocked_project: Project,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    project = clocked_project
    ended = subprocess.Popen(["true"])
    ended.wait()
    dead_pid, live_pid = str(ended.pid), str(os.getpid())
    monkeypatch.setenv("CLAUDE_PID", dead_pid)
    project.start_session("closed-terminal")
    monkeypatch.setenv("CLAUDE_PID", live_pid)  # this test stands in for a live Claude Code
    project.start_session("open-terminal")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-a"))
    codex_hook(project, ["session", "start"], "session_start_startup", "kept-thread")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-b"))
    codex_hook(project, ["session", "start"], "session_start_startup", "ended-thread")
    processes = os.path.join(data_root(), "agentmonitors", "claude-code-processes")
    threads = os.path.join(data_root(), "agentmonitors", "codex-homes")
    # A hook killed between its write and its rename leaves its partial file.
    (Path(processes) / f"{live_pid}.99999.tmp").write_text("x")
    kept_name, ended_name = "kept-thread.home", "ended-thread.home"
    assert records(processes) == {dead_pid, live_pid, f"{live_pid}.99999.tmp"}
    assert records(threads) == {kept_name, ended_name}
    # Written now on the daemon's clock, which the test set (the hooks wrote on the real one).
    written_s = project.daemon.now_ms / 1000
    for folder in (processes, threads):
        for name in os.listdir(folder):
            os.utime(os.path.join(folder, name), (written_s, written_s))

    # The ended thread's session ends now; the other goes dormant a day later, idle.
    ended = project.payload("SessionEnd", "ended-thread")
    code, _out, err = project.hook(["session", "end", "--host", "codex"], ended)
    assert code == 0, err
    project.daemon.advance(DAY_S)
    assert pass_after_tick(project).get("recordsRemoved", {}) == {}
    assert records(processes) == {dead_pid, live_pid, f"{live_pid}.99999.tmp"}
    assert records(threads) == {kept_name, ended_name}

    # Seven and a half days on: the gone process's record and the partial file go, the
    # live process's stays; the ended thread's session is pruned and its record goes;
    # the other thread's session was active until a day in, and its record stays.
    project.daemon.advance(6 * DAY_S + DAY_S // 2)
    last = pass_after_tick(project)
    assert records(processes) == {live_pid}
    assert records(threads) == {kept_name}
    assert last["removed"]["agent_sessions"] == 1
    assert last["recordsRemoved"] == {"processRecords": 2, "threadRecords": 1}
    assert session_home("kept-thread") == str(tmp_path / "codex-a")
    assert current_session(live_pid) == "open-terminal"

    # A day later that session is a week past its last activity too: it and its record go.
    project.daemon.advance(DAY_S)
    last = pass_after_tick(project)
    assert records(threads) == set()
    assert records(processes) == {live_pid}
    assert last["recordsRemoved"] == {"threadRecords": 1}

"""Delivery follows the agent: hook payloads whose ``cwd`` is not the project root.

Claude Code's payload ``cwd`` follows the agent's ``cd``. Every hook command finds the
project by walking up from it (else from ``$CLAUDE_PROJECT_DIR``), and a session keeps
the project it registered in. Real daemon, real hook processes, real payloads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.workspace import read_local_state
from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow


def run_hook(
    project: Project,
    command: list[str],
    payload: dict[str, Any],
    *,
    cwd: Path,
    project_dir: str | None = None,
) -> tuple[int, str, str]:
    env = {key: value for key, value in os.environ.items() if key != "CLAUDE_PROJECT_DIR"}
    if project_dir is not None:
        env["CLAUDE_PROJECT_DIR"] = project_dir
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env=env,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def payload(event: str, host: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    return {"session_id": host, "hook_event_name": event, "cwd": str(cwd), **extra}


def context(out: str) -> str:
    text: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return text


def session_record(project: Project, host: str) -> dict[str, Any]:
    [record] = [s for s in project.ipc("session.list", {}) if s["hostSessionId"] == host]
    return dict(record)


def test_session_started_in_a_subfolder_registers_at_the_root_and_delivers_there(
    clocked_project: Project,
) -> None:
    project = clocked_project
    sub = project.root / "notes"
    code, _out, err = run_hook(
        project, ["session", "start"], payload("SessionStart", "host-sub", sub), cwd=sub
    )
    assert code == 0, err
    record = session_record(project, "host-sub")
    assert record["workspacePath"] == project.ws
    assert read_local_state(project.ws).socket == project.daemon.socket
    # Nothing was written into the subfolder as if it were a project.
    assert not (sub / ".claude").exists() and not (sub / ".agentmonitors").exists()

    project.settled_change()
    code, out, err = run_hook(
        project,
        ["hook", "deliver"],
        payload("PostToolUse", "host-sub", sub, tool_name="Bash"),
        cwd=sub,
    )
    assert code == 0, err
    assert "notes/a.txt" in context(out)
    assert set(project.states("host-sub").values()) == {"claimed"}

    code, _out, err = run_hook(
        project, ["session", "end"], payload("SessionEnd", "host-sub", sub), cwd=sub
    )
    assert code == 0, err
    assert session_record(project, "host-sub")["status"] == "dormant"


def test_a_prompt_from_a_folder_outside_the_project_uses_claude_project_dir(
    clocked_project: Project, tmp_path: Path
) -> None:
    project = clocked_project
    project.start_session("host-out")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    project.settled_change()
    hook = ["hook", "deliver", "--debug"]
    prompt = payload("UserPromptSubmit", "host-out", outside, prompt="go on")

    code, out, err = run_hook(project, hook, prompt, cwd=outside)
    assert code == 0 and out == ""
    assert "monitoring is not enabled in" in err and "agentmonitors init --enable-only" in err

    code, out, err = run_hook(project, hook, prompt, cwd=outside, project_dir=project.ws)
    assert code == 0, err
    assert "notes/a.txt" in context(out)


def test_nested_projects_the_session_keeps_its_own_and_a_new_one_gets_the_nearest(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-outer")
    inner = project.root / "vendor" / "inner"
    (inner / ".claude").mkdir(parents=True)
    (inner / ".claude" / "agentmonitors.local.md").write_text("---\nenabled: true\n---\n")
    deep = inner / "src"
    deep.mkdir()
    project.settled_change()

    # The agent cd'd into the inner project: the outer session still gets its delivery.
    code, out, err = run_hook(
        project,
        ["hook", "deliver"],
        payload("UserPromptSubmit", "host-outer", deep, prompt="go on"),
        cwd=deep,
    )
    assert code == 0, err
    assert "notes/a.txt" in context(out)

    # A session that never registered anywhere belongs to the nearest enabled project:
    # the inner one, which has no daemon socket yet.
    code, out, err = run_hook(
        project,
        ["hook", "deliver", "--debug"],
        payload("UserPromptSubmit", "host-new", deep, prompt="hi"),
        cwd=deep,
    )
    assert code == 0 and out == ""
    assert f"workspace {json.dumps(str(inner))} (enabled" in err
    assert "no per-workspace socket configured" in err


def test_the_disabled_advisory_from_a_subfolder_names_init(
    isolated_environment: Path, tmp_path: Path
) -> None:
    root = isolated_environment
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text("---\nwatch:\n  type: file-fingerprint\n---\n")
    sub = root / "src" / "deep"
    sub.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "session", "start"],
        input=json.dumps(payload("SessionStart", "host-off", sub)).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        cwd=sub,
    )
    assert done.returncode == 0
    advice = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert advice.startswith("AgentMon: monitoring is disabled for this project (1 monitor")
    assert "`agentmonitors init --enable-only`" in advice
    assert "doctor" not in advice
    assert not (root / ".claude" / "agentmonitors.local.md").exists()


def test_what_the_enable_file_note_promises_holds(clocked_project: Project) -> None:
    """The note: safe to delete, off until `init --enable-only`, socket and db come back."""
    project = clocked_project
    enable_file = project.root / ".claude" / "agentmonitors.local.md"
    assert "agentmonitors init --enable-only" in enable_file.read_text()
    project.start_session("host-note")
    assert read_local_state(project.ws).socket == project.daemon.socket
    project.settled_change()

    enable_file.unlink()
    code, out, err = run_hook(
        project,
        ["hook", "deliver"],
        payload("UserPromptSubmit", "host-note", project.root, prompt="go on"),
        cwd=project.root,
    )
    assert (code, out, err) == (0, "", "")  # off: nothing delivered, nothing said

    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "init", "--enable-only"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=project.root,
        env={key: value for key, value in os.environ.items() if key != "CLAUDE_PROJECT_DIR"},
    )
    assert done.returncode == 0, done.stderr
    state = read_local_state(project.ws)
    assert state.enabled and state.socket is None and state.db is None

    code, out, err = run_hook(
        project,
        ["session", "start"],
        payload("SessionStart", "host-note", project.root, source="resume"),
        cwd=project.root,
    )
    assert code == 0, err
    state = read_local_state(project.ws)
    assert state.socket == project.daemon.socket and state.db == project.daemon.db
    # Monitoring is back: the recap shows what waited meanwhile.
    assert "notes/a.txt" in context(out)

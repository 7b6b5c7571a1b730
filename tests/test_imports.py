"""The hook path's building blocks must stay cheap to import."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import DaemonError, call
from tests.conftest import CliResult
from tests.transports.test_hook_end_to_end import make_project

Run = Callable[..., CliResult]


def imported_modules(statement: str) -> set[str]:
    code = (
        "import sys; before = set(sys.modules); "
        f"{statement}; print('\\n'.join(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return {name for name in out.split() if name}


@pytest.mark.slow
def test_workspace_module_imports_only_the_standard_library() -> None:
    modules = imported_modules("import agentmonitors.workspace")
    ours = {name for name in modules if name.split(".")[0] == "agentmonitors"}
    assert ours == {"agentmonitors", "agentmonitors.workspace"}
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()


@pytest.mark.slow
def test_daemon_client_and_paths_import_only_the_standard_library() -> None:
    modules = imported_modules("import agentmonitors.daemon.client, agentmonitors.paths")
    ours = {name for name in modules if name.split(".")[0] == "agentmonitors"}
    assert ours == {
        "agentmonitors",
        "agentmonitors.workspace",
        "agentmonitors.paths",
        "agentmonitors.daemon",
        "agentmonitors.daemon.client",
        "agentmonitors.daemon.protocol",
    }
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()
    # The hook path's client is plain sockets: asyncio alone costs more than the hook.
    assert "asyncio" not in modules


@pytest.mark.slow
def test_delivery_rendering_and_sizing_import_only_the_standard_library() -> None:
    modules = imported_modules(
        "import agentmonitors.delivery.text, agentmonitors.delivery.render, "
        "agentmonitors.delivery.sizing"
    )
    ours = {name for name in modules if name.split(".")[0] == "agentmonitors"}
    assert ours == {
        "agentmonitors",
        "agentmonitors.delivery",
        "agentmonitors.delivery.text",
        "agentmonitors.delivery.render",
        "agentmonitors.delivery.sizing",
    }
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()
    # Pure string work: not even typing or json on the hook path.
    assert not {"typing", "json", "re", "dataclasses"} & modules


MODULES_MARK = "--- modules loaded ---"
HEAVY = {"click", "pydantic", "ruamel", "rich", "httpx", "mcp", "sqlite3", "asyncio", "typing"}


def run_hook_command(command: list[str], payload: dict[str, Any], cwd: Path) -> HookRun:
    """One hook command through the real entry point, in a fresh interpreter that reports
    every module it ended up with (after the hook's own stderr) and exits with its code."""
    code = (
        "import sys; from agentmonitors.cli.main import main; status = main(sys.argv[1:]);"
        f" print({MODULES_MARK!r}, *sorted(sys.modules), sep='\\n', file=sys.stderr);"
        " sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode()
    assert MODULES_MARK in stderr, f"{command}: the hook did not return: {stderr}"
    own, _, modules = stderr.partition(MODULES_MARK + "\n")
    return HookRun(done.returncode, done.stdout.decode(), own, set(modules.split()))


class HookRun:
    def __init__(self, code: int, out: str, err: str, modules: set[str]) -> None:
        self.code = code
        self.out = out
        self.err = err
        self.heavy = {name.split(".")[0] for name in modules} & HEAVY


@pytest.mark.slow
def test_hook_commands_run_for_real_without_the_heavy_stack(
    isolated_environment: Path, run_cli: Run
) -> None:
    """The three hook commands of a session's life, each a full run that does its job (a
    daemon booted and a session registered, a reminder delivered, the session ended)
    without loading click, pydantic, sqlite3, asyncio or typing."""
    project = make_project(isolated_environment, run_cli)
    try:
        started = run_hook_command(
            ["session", "start"], project.payload("SessionStart", source="startup"), project.root
        )
        assert (started.code, started.heavy) == (0, set()), started.err
        session_id = project.session_id()
        registered = f"AgentMon: session {session_id} registered; daemon at {project.socket}"
        assert started.err.strip() == registered

        project.change()
        delivered = run_hook_command(
            ["hook", "deliver"], project.payload("UserPromptSubmit", prompt="hi"), project.root
        )
        assert (delivered.code, delivered.err, delivered.heavy) == (0, "", set())
        context = json.loads(delivered.out)["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("AgentMon: Monitored changes are pending.")
        assert f"--session {session_id}" in context

        ended = run_hook_command(
            ["session", "end"], project.payload("SessionEnd", reason="other"), project.root
        )
        assert (ended.code, ended.heavy) == (0, set()), ended.err
        assert ended.err.strip() == f"AgentMon: session {session_id} ended"
        (session,) = [s for s in call(project.socket, "session.list", {}) if s["id"] == session_id]
        assert session["status"] == "dormant"
    finally:
        with contextlib.suppress(DaemonError):
            call(project.socket, "stop", {})

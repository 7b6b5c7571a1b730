"""The hook path's building blocks must stay cheap to import."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest


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
def test_transport_rendering_and_sizing_import_only_the_standard_library() -> None:
    modules = imported_modules(
        "import agentmonitors.transports.text, agentmonitors.transports.render, "
        "agentmonitors.transports.sizing"
    )
    ours = {name for name in modules if name.split(".")[0] == "agentmonitors"}
    assert ours == {
        "agentmonitors",
        "agentmonitors.transports",
        "agentmonitors.transports.text",
        "agentmonitors.transports.render",
        "agentmonitors.transports.sizing",
    }
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()
    # Pure string work: not even typing or json on the hook path.
    assert not {"typing", "json", "re", "dataclasses"} & modules


@pytest.mark.slow
@pytest.mark.parametrize("command", [["hook", "deliver"], ["session", "start"], ["session", "end"]])
def test_hook_commands_never_load_the_heavy_stack(
    command: list[str], isolated_environment: object, tmp_path: object
) -> None:
    """A full hook run, enabled workspace and a live-looking socket path included."""
    import json
    import os

    from agentmonitors.daemon.client import DaemonError, call
    from agentmonitors.paths import fit_socket_path

    workspace = str(tmp_path)
    socket = os.path.join(workspace, "daemon.sock")
    os.makedirs(os.path.join(workspace, ".claude"), exist_ok=True)
    with open(os.path.join(workspace, ".claude", "agentmonitors.local.md"), "w") as handle:
        handle.write(f"---\nenabled: true\nsocket: {socket}\n---\n")
    payload = json.dumps(
        {"session_id": "s", "hook_event_name": "UserPromptSubmit", "cwd": workspace}
    )
    code = (
        "import sys, io; sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()));"
        " from agentmonitors.cli.main import main;"
        f" main({command!r}); print('\\n'.join(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, payload], capture_output=True, text=True, check=False
    )
    # session start boots a daemon for the workspace: stop it.
    with contextlib.suppress(DaemonError):
        call(fit_socket_path(socket), "stop", {})
    loaded = set(done.stderr.split())
    heavy = {"click", "pydantic", "ruamel", "rich", "httpx", "mcp", "sqlite3", "asyncio", "typing"}
    assert {name.split(".")[0] for name in loaded} & heavy == set()

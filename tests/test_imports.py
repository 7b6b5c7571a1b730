"""The hook path's building blocks must stay cheap to import."""

from __future__ import annotations

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

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

from agentmonitors import __version__
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
    assert ours == {
        "agentmonitors",
        "agentmonitors.workspace",
        "agentmonitors.fastpath",
        "agentmonitors.fastpath.scalar_frontmatter",
    }
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
        "agentmonitors.fastpath",
        "agentmonitors.fastpath.jsonline",
        "agentmonitors.fastpath.scalar_frontmatter",
    }
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()
    # The hook path's client is plain sockets: asyncio alone costs more than the hook.
    assert "asyncio" not in modules
    # The json package (and the re it brings) loads on the first call, not at import.
    assert not {"json", "re", "socket", "typing"} & modules


@pytest.mark.slow
def test_the_delivery_modules_a_hook_loads_import_only_the_standard_library() -> None:
    """Sizing and rendering run in the daemon now; what a hook still loads from
    ``delivery`` (shared words, JSON, heartbeats, debug text) stays pure and small."""
    modules = imported_modules(
        "import agentmonitors.delivery.text, agentmonitors.delivery.vocabulary, "
        "agentmonitors.fastpath.jsonline, agentmonitors.delivery.heartbeats"
    )
    ours = {name for name in modules if name.split(".")[0] == "agentmonitors"}
    assert ours == {
        "agentmonitors",
        "agentmonitors.delivery",
        "agentmonitors.delivery.text",
        "agentmonitors.delivery.vocabulary",
        "agentmonitors.fastpath",
        "agentmonitors.fastpath.jsonline",
        "agentmonitors.delivery.heartbeats",
        "agentmonitors.fastpath.digests",
        # The untrusted-text rule every renderer shares (standard library only).
        "agentmonitors.untrusted",
    }
    third_party = {
        name
        for name in modules - ours
        if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    }
    assert third_party == set()
    assert not {"typing", "json", "re", "dataclasses", "datetime", "math"} & modules


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
        self.modules = modules
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
        # Its JSON is read and written by string methods: no json package, no re.
        assert not {"json", "re"} & delivered.modules
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


# What the agent's own commands (and --version) must not load: click and the stacks
# only parsing, rendering or network work needs.
AGENT_HEAVY = HEAVY | {"jsonschema", "toon_format", "typing"}


@pytest.mark.slow
def test_version_and_the_quick_commands_run_without_click_or_the_heavy_stack(
    isolated_environment: Path, run_cli: Run
) -> None:
    """``--version``, ``events list``, ``events ack`` and ``session list``, each a full run
    against a real daemon that prints its answer, load none of click, pydantic, ruamel,
    rich, jsonschema, toon_format, asyncio or typing."""
    project = make_project(isolated_environment, run_cli)
    try:
        project.start_session()
        session_id = project.session_id()
        project.change()
        (event,) = project.events()

        version = run_hook_command(["--version"], {}, project.root)
        assert (version.code, version.heavy) == (0, set())
        assert version.out.strip() == __version__

        listed = run_hook_command(
            ["events", "list", "--session", session_id, "--format", "json"], {}, project.root
        )
        assert (listed.code, listed.err, listed.heavy) == (0, "", set())
        assert [item["id"] for item in json.loads(listed.out)] == [event["id"]]

        # TOON (what an agent gets by default) is rendered by the daemon, so the
        # command loads no encoder at all.
        toon = run_hook_command(
            ["events", "list", "--session", session_id, "--format", "toon"], {}, project.root
        )
        assert toon.code == 0, toon.err
        assert toon.heavy == set()
        assert not [name for name in toon.modules if name.startswith("toon_format")]
        assert "importlib.metadata" not in toon.modules
        from toon_format import encode

        assert toon.out == encode(json.loads(listed.out)) + "\n"

        text = run_hook_command(
            ["events", "list", f"--session={session_id}", "--unread", "--limit", "5"],
            {},
            project.root,
        )
        assert (text.code, text.heavy) == (0, set()), text.err
        assert text.out.splitlines()[0].split() == ["ID", "Monitor", "Urgency", "State", "Title"]
        assert event["id"] in text.out

        acked = run_hook_command(
            ["events", "ack", "--session", session_id, "--event-ids", event["id"]], {}, project.root
        )
        assert (acked.code, acked.out, acked.heavy) == (0, "Acknowledged 1 event.\n", set())

        sessions = run_hook_command(["session", "list"], {}, project.root)
        assert (sessions.code, sessions.heavy) == (0, set()), sessions.err
        assert session_id in sessions.out

        # People's commands go through click, but still load only what they use.
        status = run_hook_command(["daemon", "status", "--format", "json"], {}, project.root)
        assert status.code == 0, status.err
        assert json.loads(status.out)["running"] is True
        assert status.heavy - {"click", "typing"} == set()
    finally:
        with contextlib.suppress(DaemonError):
            call(project.socket, "stop", {})


@pytest.mark.slow
def test_what_the_quick_path_cannot_parse_goes_to_click(isolated_environment: Path) -> None:
    """Help, a bad value and a missing --session are click's: its messages, exit 1."""
    tmp_path = isolated_environment
    helped = run_hook_command(["events", "list", "--help"], {}, tmp_path)
    assert helped.code == 0
    assert "--since-baseline" in helped.out
    assert "click" in helped.heavy

    bad = run_hook_command(["events", "list", "--session", "s", "--limit", "0"], {}, tmp_path)
    assert bad.code == 2  # a usage error
    assert bad.err.startswith("error: Invalid value for '--limit': 0 is not in the range x>=1.")

    missing = run_hook_command(["events", "ack"], {}, tmp_path)
    assert missing.code == 2
    assert missing.err.startswith("error: Missing option '--session'.")

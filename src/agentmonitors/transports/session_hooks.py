"""``session start`` and ``session end``: the SessionStart and SessionEnd hooks.

``session start`` boots the workspace's daemon when none answers, registers (or
resumes) the session, and prints the post-compact recap in the same process.
Standard library only, like every hook command.
"""

from __future__ import annotations

import contextlib
import os
import sys

from agentmonitors.fastpath.argv import VALUE, parse_strict
from agentmonitors.paths import fit_socket_path, workspace_socket
from agentmonitors.transports.deliver import _quiet, _write, say_nothing
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS, adapter_for
from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE
from agentmonitors.workspace import find_workspace_root

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.transports.hosts.base import HookPayload, HostAdapter


def _count_definitions(workspace: str) -> int:
    """Monitor files under the project's monitors folder, valid or not."""
    root = os.path.join(workspace, ".claude", "monitors")
    count = 0
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            count += sum(1 for _ in _monitor_files(entry.path))
        elif entry.name.endswith(".md") and entry.name.lower() != "readme.md":
            count += 1
    return count


def _monitor_files(folder: str) -> list[str]:
    found = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        if "MONITOR.md" in files:
            found.append(os.path.join(current, "MONITOR.md"))
    return found


def disabled_advisory(count: int) -> str:
    plural = "" if count == 1 else "s"
    return (
        f"AgentMon: monitoring is disabled for this project ({count} monitor definition{plural} "
        "found under .claude/monitors/, but none of them are being watched). To enable it, "
        "run `agentmonitors init --enable-only` in the project root (it turns monitoring on "
        "and gitignores AgentMon's local files); the next session then starts the daemon. "
        "Check the definitions any time with `agentmonitors validate`."
    )


def parse_host_args(command: str, args: list[str]) -> HostAdapter | str:
    """``--host NAME`` (or ``--host=NAME``), the only flag of the session hooks; a
    string is the usage error."""
    parsed = parse_strict(
        {"--host": ("host", VALUE, HOSTS)},
        args,
        defaults={"host": DEFAULT_HOST},
        unknown=lambda arg: f"{command} takes only --host (got {arg})",
    )
    return parsed if isinstance(parsed, str) else adapter_for(parsed["host"])


def run_session_start(args: list[str]) -> int:
    adapter = parse_host_args("session start", args)
    if isinstance(adapter, str):
        sys.stderr.write(f"error: {adapter}\n")
        return 1
    try:
        return session_start(adapter.read(), adapter)
    except Exception as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    finally:
        say_nothing(adapter)


def session_start(payload: HookPayload, adapter: HostAdapter = CLAUDE_CODE) -> int:
    if payload.session_id is None:
        return 0
    workspace, state = adapter.project(payload)
    if not state.enabled:
        count = _count_definitions(find_workspace_root(workspace))
        if count:
            _write(disabled_advisory(count), adapter.session_start_event, "json", _quiet, adapter)
        return 0

    # Lazy: the daemon client, the boot and the recap load only for an enabled project.
    from agentmonitors.transports.session_open import open_session

    return open_session(payload.session_id, adapter, workspace, state)


def run_session_end(args: list[str]) -> int:
    """The SessionEnd hook: close the matching session. Silent, always 0."""
    adapter = parse_host_args("session end", args)
    if isinstance(adapter, str):
        sys.stderr.write(f"error: {adapter}\n")
        return 0
    with contextlib.suppress(Exception):
        session_end(adapter.read(), adapter)
    say_nothing(adapter)
    return 0


def session_end(payload: HookPayload, adapter: HostAdapter = CLAUDE_CODE) -> None:
    if payload.session_id is None:
        return
    workspace, state = adapter.project(payload)
    if not state.enabled or state.socket is None:
        return
    # Lazy: a project that is not enabled never loads the daemon client.
    from agentmonitors.daemon.client import DaemonError, call

    socket = fit_socket_path(workspace_socket(workspace, state))
    try:
        sessions = call(socket, "session.list", {})
        match = next(
            (
                item
                for item in sessions or []
                if isinstance(item, dict) and item.get("hostSessionId") == payload.session_id
            ),
            None,
        )
        if match is None:
            return
        call(socket, "session.close", {"sessionId": match["id"]})
    except DaemonError:
        return
    sys.stderr.write(f"AgentMon: session {match['id']} ended\n")

"""Where ``channel serve`` binds: its workspace, socket, host session and poll interval.

Kept apart from the server so the options can be resolved (and tested) without the
MCP SDK.
"""

from __future__ import annotations

import os

from agentmonitors.delivery.heartbeats import CHANNEL_POLL_MS
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.paths import (
    SOCKET_ENV,
    _global_socket_path,
    fit_socket_path,
    notice_once,
    session_marker,
    workspace_socket,
)
from agentmonitors.transports.claude_code import SESSION_ENV
from agentmonitors.workspace import logical_cwd, resolve_enabled_project


@dataclass(frozen=True)
class ChannelOptions:
    workspace: str
    enabled: bool
    socket_path: str
    host_session_id: str | None
    poll_ms: int = CHANNEL_POLL_MS


def resolve_options(
    *,
    socket: str | None,
    poll_ms: str | int | None,
    host_session_id: str | None,
    workspace: str | None,
) -> ChannelOptions:
    """Flags, then the environment Claude Code gives an MCP server.

    The project is found like the hooks find it: walking up from ``--workspace`` (else
    the current directory) to the nearest enabled project, one where this session is
    already registered winning, and from ``$CLAUDE_PROJECT_DIR`` when the start lies
    outside every enabled project (an explicit ``--workspace`` has no fallback). The
    socket is ``--socket``, else the enabled project's, else ``$AGENTMONITORS_SOCKET``,
    else the global default: the environment comes last so a stale value cannot cross
    workspaces. ``poll_ms`` is checked by the command line; a bad value here means
    the default.
    """
    session = host_session_id or os.environ.get(SESSION_ENV) or None
    marker = session_marker(session) if session else None
    env: dict[str, str] = dict(os.environ)
    if workspace:
        env.pop("CLAUDE_PROJECT_DIR", None)
    root, state = resolve_enabled_project(workspace or logical_cwd(), marker, env)
    if socket:
        candidate = socket
    elif state.enabled:
        candidate = workspace_socket(root, state, notice=notice_once)
    else:
        candidate = os.environ.get(SOCKET_ENV) or _global_socket_path()
    try:
        every = int(poll_ms) if poll_ms is not None else CHANNEL_POLL_MS
    except ValueError:
        every = CHANNEL_POLL_MS
    if every <= 0:
        every = CHANNEL_POLL_MS
    return ChannelOptions(
        workspace=root,
        enabled=state.enabled,
        socket_path=fit_socket_path(candidate, explicit=bool(socket)),
        host_session_id=session,
        poll_ms=every,
    )

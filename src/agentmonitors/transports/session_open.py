"""``session start`` in an enabled project: boot, register, recap.

Loaded by ``transports/session_hooks.py`` once the enable file says yes, so a session
in a project that is not enabled never imports the daemon client.
"""

from __future__ import annotations

import os
import sys

from agentmonitors.daemon.client import call, ping
from agentmonitors.paths import (
    default_hook_state_path,
    fit_socket_path,
    notice_once,
    workspace_db,
    workspace_socket,
)
from agentmonitors.transports.deliver import _quiet
from agentmonitors.transports.deliver_debug import blocked_monitor_ids
from agentmonitors.transports.deliver_session import deliver_to_session
from agentmonitors.transports.live_hint import live_sentence, plugin_follower_armed
from agentmonitors.workspace import write_local_state

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.transports.hosts.base import HostAdapter
    from agentmonitors.workspace import LocalState


def open_session(
    host_session_id: str, adapter: HostAdapter, workspace: str, state: LocalState
) -> int:
    """Boot the daemon when none answers, register the session, print the recap."""
    # The enable file may come with the repository: a `socket:` or `db:` that is not
    # ours is ignored (said on stderr) and replaced below by the workspace's own.
    socket = fit_socket_path(workspace_socket(workspace, state, notice=notice_once))
    db = workspace_db(workspace, state, notice=notice_once)
    # The daemon this start boots registers the session itself before its first check,
    # so what that check finds (a command failing from the start) reaches this session.
    booting = f"{adapter.name}:{host_session_id}"
    if not ping(socket):
        # Lazy: only the first session of a workspace boots its daemon.
        from agentmonitors.transports.daemon_boot import boot_or_record_failure

        failure = boot_or_record_failure(workspace, socket, db, state, booting)
        if failure is not None:
            sys.stderr.write(f"error: {failure}\n")
            return 1
    write_local_state(
        workspace,
        state._replace(enabled=True, socket=socket, db=db, last_boot_failure_at=None),
    )
    try:
        adapter.record_session_environment(host_session_id, os.environ)
    except OSError as error:  # the session still registers; the daemon's own env serves
        sys.stderr.write(f"AgentMon: could not record the session's environment: {error}\n")
    session = call(
        socket,
        "session.open",
        {
            "adapter": adapter.name,
            "hostSessionId": host_session_id,
            "agentIdentity": host_session_id,
            "hookStatePath": default_hook_state_path(host_session_id, workspace),
            "workspacePath": workspace,
            "role": "lead",
        },
    )
    sys.stderr.write(f"AgentMon: session {session['id']} registered; daemon at {socket}\n")

    deliver_to_session(
        socket,
        host_session_id,
        "post-compact",
        event_name=adapter.session_start_event,
        workspace=workspace,
        output_format="json",
        debug=_quiet,
        adapter=adapter,
        preface=_preface(
            blocked_monitor_ids(socket),
            workspace,
            state,
            session["id"],
            socket,
            adapter,
            host_session_id,
        ),
    )
    return 0


def _preface(
    waiting: list[str],
    workspace: str,
    state: LocalState,
    session_id: str,
    socket: str,
    adapter: HostAdapter,
    host_session_id: str,
) -> str:
    """The lines before the recap: the approval line, then the live-updates sentence."""
    try:
        armed = plugin_follower_armed(host_session_id)
        live = live_sentence(
            workspace, state.live, session_id, socket, host=adapter.name, armed=armed
        )
    except Exception:  # an offer is never worth a failed session start
        live = ""
    return "\n".join(line for line in (approval_line(waiting), live) if line)


def approval_line(waiting: list[str]) -> str:
    """The one line telling the agent which monitors wait, and that approving is the user's."""
    if not waiting:
        return ""
    names = ", ".join(waiting)
    which = "monitor waits" if len(waiting) == 1 else "monitors wait"
    return (
        f"AgentMon: {len(waiting)} project {which} for the user's approval and will not run "
        f"until then: {names}. Tell the user; only they may approve, after reading what each "
        "runs or reads (`agentmonitors monitor approve --list`, then `agentmonitors monitor "
        "approve <id>`). Do not run the approve command yourself."
    )

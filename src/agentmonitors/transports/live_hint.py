"""The SessionStart sentence about live updates: armed by the plugin, or offered.

In an interactive Claude Code session the plugin's own ``monitors`` entry runs
``events follow`` for the session (``transports/follow_host.py``), so the sentence only
says live updates are on and asks the agent not to start another. Elsewhere (``claude
-p``, the SDK: plugin monitors are not armed there) it offers the Monitor tool.

``events follow`` prints one line per delivery, and the Monitor tool turns each line
into a turn while the session is idle; the agent can only start it if it is told the
exact command for its session. ``session start`` adds this one sentence to its context
when a monitor is defined (the project's own or the user's) and the enable file does
not say ``live: off``. Standard library only and no daemon round trip: it costs
session start a few directory reads.
"""

from __future__ import annotations

import os
import sys

from agentmonitors.delivery.heartbeats import session_listening
from agentmonitors.delivery.text import _socket_clause, inline
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER
from agentmonitors.workspace import enable_file_path, live_setting, user_monitors_dir

FOLLOW_TIMEOUT_MS = 1_800_000
"""What to pass as the Monitor tool's ``timeout_ms``: its cap, above ``events follow``'s
own 25-minute limit, so the follower ends first with its restart line."""
FOLLOW_DESCRIPTION = "AgentMon live updates"
INTERACTIVE_ENTRYPOINT = "cli"
"""``$CLAUDE_CODE_ENTRYPOINT`` in an interactive session (``claude -p`` says ``sdk-cli``)."""
PLUGIN_MONITORS = os.path.join("monitors", "monitors.json")


def plugin_follower_armed(host_session_id: str) -> bool:
    """Whether the plugin's follower runs, or is about to, for this session.

    Knowable at session start: a fresh ``follow`` heartbeat naming the host session
    (only the plugin's follower knows it), or this hook was run by a plugin that
    declares our monitor (``$CLAUDE_PLUGIN_ROOT``) in an interactive session, where
    Claude Code arms every plugin monitor about 0.7 s after launch
    (docs/architecture.md, "Live updates").
    """
    if host_listening(host_session_id):
        return True
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return (
        os.environ.get("CLAUDE_CODE_ENTRYPOINT") == INTERACTIVE_ENTRYPOINT
        and bool(root)
        and os.path.isfile(os.path.join(str(root), PLUGIN_MONITORS))
    )


def follow_command(session_id: str, socket_path: str) -> str:
    """The exact ``events follow`` command line for this session and daemon."""
    return f"agentmonitors events follow --session {inline(session_id)}" + (
        _socket_clause(socket_path)
    )


def live_sentence(
    workspace: str,
    live: str | None,
    session_id: str,
    socket_path: str,
    *,
    host: str,
    armed: bool = False,
) -> str:
    """The sentence for this session, or ``""`` when live updates are not offered.

    ``live`` is the enable file's ``live:`` value as written; an unknown one is reported
    on stderr (naming the file and the key) and the default, on, applies. Only Claude
    Code has the Monitor tool, so another ``host`` is offered nothing. ``armed``: the
    plugin's follower serves this session (:func:`plugin_follower_armed`).
    """
    if host != CLAUDE_ADAPTER:
        return ""
    choice = live_setting(live)
    if choice is None:
        sys.stderr.write(
            f"warning: {enable_file_path(workspace)}: live: {live!r} is not on or off "
            "(true/false and yes/no work too); live updates stay offered, the default\n"
        )
    if choice is False:
        return ""
    project = os.path.join(workspace, ".claude", "monitors")
    user = user_monitors_dir()
    if not _any_definition(project) and not (
        user is not None and os.path.abspath(user) != project and _any_definition(user)
    ):
        return ""
    if armed:
        return (
            "AgentMon: live updates are on: while this session is idle, monitor events "
            f'arrive on their own as notifications from the monitor "{FOLLOW_DESCRIPTION}" '
            "(the agentmonitors plugin runs it); do not start `agentmonitors events follow` "
            "yourself."
        )
    command = follow_command(session_id, socket_path)
    how = f'description "{FOLLOW_DESCRIPTION}", timeout_ms {FOLLOW_TIMEOUT_MS}'
    if follower_running(session_id):
        return (
            f"AgentMon: live updates already run for this session in a Monitor (`{command}`); "
            "when its last line asks you to, or it times out, start it again with the "
            f"Monitor tool ({how} and that command)."
        )
    return (
        "AgentMon: live updates are available: to hear of monitor events while the session "
        f"is idle, start the Monitor tool with {how} and command `{command}`, and start it "
        "again when its last line asks you to or it times out."
    )


def _any_definition(root: str) -> bool:
    """Whether ``root`` holds a monitor file (``<id>.md`` or ``<id>/**/MONITOR.md``)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return False
    folders = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            folders.append(entry.path)
        elif entry.name.endswith(".md") and entry.name.lower() != "readme.md":
            return True
    for folder in folders:
        for _current, dirs, files in os.walk(folder):
            if "MONITOR.md" in files:
                return True
            dirs[:] = [name for name in dirs if not name.startswith(".")]
    return False


def follower_running(session_id: str) -> bool:
    """Whether a fresh ``follow`` heartbeat names this session (a follower that exits
    removes its record; one that died goes stale within its 30 s lifetime)."""
    return session_listening("follow", session_id)


def host_listening(host_session_id: str) -> bool:
    """Whether a fresh ``follow`` heartbeat names this host session (the plugin's)."""
    return session_listening("follow", host_session_id, field="hostSessionId")

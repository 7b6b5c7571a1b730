"""Which delivery points each agent host's hooks can reach, and what happens instead.

Data only, no imports: the host adapters (``transports/hosts``) read it on the hook
path, and ``doctor`` (which runs in the daemon, below the transports) reads it to say
which lifecycles a session's host cannot reach. See docs/architecture.md, "Host
adapters".
"""

from __future__ import annotations

REGISTER = "register"
"""Register the session and show the recap when it starts."""
TURN_INTERRUPTIBLE = "turn-interruptible"
TURN_IDLE = "turn-idle"
POST_COMPACT = "post-compact"
"""The recap again after the host compacted the conversation."""
DEREGISTER = "deregister"
"""Mark the session dormant when it ends."""
POINTS = (REGISTER, TURN_INTERRUPTIBLE, TURN_IDLE, POST_COMPACT, DEREGISTER)
"""The delivery points a host may reach, in the order ``doctor`` lists them."""

HOST_TITLES = {"claude-code": "Claude Code", "codex": "Codex", "cursor": "Cursor"}

UNREACHABLE: dict[str, dict[str, str]] = {
    "claude-code": {},
    "codex": {
        DEREGISTER: "Codex has no SessionEnd hook: a Codex session goes dormant once it "
        "has been idle for 30 minutes, and a new prompt in it makes it active again.",
    },
    "cursor": {
        TURN_INTERRUPTIBLE: "Cursor shows no tool-call context to the model: what would "
        "interrupt a turn waits for the agent to stop and arrives as a follow-up message.",
        POST_COMPACT: "Cursor has no hook after it compacts a conversation: no recap then; "
        "unread events stay pending for the next stop (or `agentmonitors events list`).",
    },
}
"""Host → {unreachable point: what happens instead}. A host not listed reaches all."""

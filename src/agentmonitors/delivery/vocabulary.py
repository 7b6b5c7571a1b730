"""The delivery words every layer shares, defined once.

No imports at all: the hook path, the daemon and the command line all read these,
and the hook pays for every module it loads.
"""

from __future__ import annotations

LIFECYCLES = ("turn-interruptible", "turn-idle", "post-compact")
"""The delivery moments, in the order flags and errors list them."""

CLAUDE_ADAPTER = "claude-code"
"""The adapter sessions default to: Claude Code's hooks and channel register under it."""

REMINDER = "Monitored changes are pending."
"""The fixed line of a reminder claim, and of a high claim's coalesced footer."""

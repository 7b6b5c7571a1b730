"""How a transport lays out a batch of event blocks: its ``Packing``.

See docs/architecture.md, "Text and sizes". A transport's packing says how each block is
escaped, how blocks are joined, whether a header names the blocks shown (the hook's ack
line) and which markers say what was cut or deferred. Sizing (``delivery/layout.py``)
and rendering (``delivery/render.py``) read these; nothing there asks which transport it
is. Standard library only: the hook path reaches the text helpers this uses.
"""

from __future__ import annotations

from agentmonitors.delivery.text import (
    HOOK_LEAD_LINE,
    ack_line,
    channel_action_step,
    channel_cut_marker,
    channel_deferred_marker,
    hook_action_step,
    hook_cut_marker,
    hook_deferred_marker,
    hook_recap_marker,
    sanitize_channel,
    sanitize_channel_own,
    sanitize_hook,
)
from agentmonitors.untrusted import escape_invisible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Marker = Callable[[str, str, int | None], str]
    RecapMarker = Callable[..., str]

__all__ = ["CHANNEL_PACKING", "HOOK_PACKING", "Packing"]


class Packing:
    """The layout rules of one transport's text (one instance per style, shared)."""

    __slots__ = (
        "action_step",
        "cut_marker",
        "deferred_marker",
        "joiner",
        "names_shown_ids",
        "own",
        "recap_marker",
        "sanitize",
    )

    def __init__(
        self,
        *,
        sanitize: Callable[[str], str],
        own: Callable[[str], str],
        action_step: Callable[[str, str], str],
        joiner: str,
        names_shown_ids: bool,
        deferred_marker: Marker,
        cut_marker: Marker,
        recap_marker: RecapMarker | None = None,
    ) -> None:
        self.sanitize = sanitize
        """The block rule plus the transport's own, applied to every untrusted field."""
        self.own = own
        """Our own text (a reminder): escaped, never quoted as a line that reads as ours."""
        self.action_step = action_step
        """What to run next, appended to a reminder or a footer."""
        self.joiner = joiner
        self.names_shown_ids = names_shown_ids
        """A header names the shown blocks' ids (its length grows with them)."""
        self.deferred_marker = deferred_marker
        self.cut_marker = cut_marker
        self.recap_marker = recap_marker
        """A recap's own marker; None: a recap is laid out like any claim."""

    def header(self, session_id: str, socket_path: str, ids: list[str]) -> str:
        if not self.names_shown_ids:
            return ""
        return f"{HOOK_LEAD_LINE}\n{ack_line(session_id, socket_path, ids)}\n\n"

    def footer(self, reminder: str | None, session_id: str, socket_path: str) -> str:
        """The coalesced-reminder footer (``""`` without one); its length is reserved out
        of the cap."""
        if not reminder:
            return ""
        return "\n\n" + self.own(reminder) + self.action_step(session_id, socket_path)


HOOK_PACKING = Packing(
    sanitize=sanitize_hook,
    own=escape_invisible,
    action_step=hook_action_step,
    joiner="\n",
    names_shown_ids=True,
    deferred_marker=hook_deferred_marker,
    cut_marker=hook_cut_marker,
    recap_marker=hook_recap_marker,
)
"""A hook's ``additionalContext``: a header whose ack line names the blocks shown."""

CHANNEL_PACKING = Packing(
    sanitize=sanitize_channel,
    own=sanitize_channel_own,
    action_step=channel_action_step,
    joiner="\n\n",
    names_shown_ids=False,
    deferred_marker=channel_deferred_marker,
    cut_marker=channel_cut_marker,
)
"""An MCP channel push's ``content``: blocks alone, no header."""

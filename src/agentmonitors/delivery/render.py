"""Render a ``DeliveryClaim`` as a transport's text, within its cap.

See docs/architecture.md, "Text and sizes". The blocks are laid out by
``delivery/layout.py`` with the transport's :class:`~agentmonitors.delivery.packing.Packing`.
Every renderer also reports which events it showed, so the caller can hold "claimed set
== rendered set" before it commits. Standard library only.
"""

from __future__ import annotations

from agentmonitors.delivery.layout import Layout, claim_events, claim_layout, claim_text
from agentmonitors.delivery.meta import channel_meta
from agentmonitors.delivery.packing import CHANNEL_PACKING, HOOK_PACKING, Packing
from agentmonitors.delivery.text import (
    HOOK_PREFIX,
    MAX_ADDITIONAL_CONTEXT,
    MAX_CHANNEL_CONTENT,
    channel_action_step,
    channel_cut_marker,
    counted_cut,
    cut,
    hook_action_step,
    hook_cut_marker,
    hook_recap_marker,
    sanitize_channel_own,
    truncate_counted,
)
from agentmonitors.untrusted import escape_invisible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    Claim = Mapping[str, Any]

__all__ = [
    "render_body",
    "render_channel",
    "render_channel_shown",
    "render_hook",
    "render_hook_shown",
]


def render_body(
    claim: Claim,
    socket_path: str,
    *,
    packing: Packing,
    more_deferred: bool,
    cap: int,
) -> tuple[str, list[str]]:
    layout, tail, budget, _recap = claim_layout(claim, socket_path, packing, cap)
    n = len(layout.blocks)
    _fits, _included, whole, reserved = layout.fit(more_deferred, budget)
    if whole == n and not more_deferred:
        return layout.text(n) + tail, list(layout.ids)
    if reserved >= 1:
        return layout.text(reserved) + layout.deferred(reserved) + tail, layout.ids[:reserved]
    # Even the first block alone does not fit beside a marker: show it cut, its marker
    # counting the characters left out. The block counts as shown only if its header
    # survives (then the ack line names it); else the marker counts it among the rest.
    # Counting it shown never makes the marker longer, so when even that cuts into the
    # header, counting it pending does too.
    first = layout.text(1)
    others = more_deferred or n > 1
    for shown_count in (1, 0):

        def marker(chars: int, shown: int = shown_count) -> str:
            return _cut_marker(layout, shown, others, chars)

        kept, closing = counted_cut(len(first), budget, marker, most=len(layout.blocks[0]))
        if shown_count == 0 or kept > len(layout.header(1)):
            break
    return cut(first, kept) + closing + tail, layout.ids[:shown_count]


def _cut_marker(layout: Layout, shown: int, others: bool, chars: int) -> str:
    """The markers of a first block cut short: its own cut (``chars`` left out), then
    what else waits."""
    if layout.recap:
        return layout.deferred(shown, chars)
    marker = layout.packing.cut_marker(layout.session_id, layout.socket_path, chars)
    return marker + layout.deferred(shown) if others else marker


def render_hook_shown(
    claim: Claim,
    socket_path: str,
    *,
    more_deferred: bool,
    cap: int = MAX_ADDITIONAL_CONTEXT,
) -> tuple[str, list[str]]:
    """The hook's ``additionalContext`` and the ids of the events it shows.

    ``""`` (and no ids) for a reminder whose message is blank.
    """
    session_id = claim_text(claim, "sessionId")
    events = claim_events(claim)
    if events:
        return render_body(
            claim,
            socket_path,
            packing=HOOK_PACKING,
            more_deferred=more_deferred,
            cap=cap,
        )
    # A message is ours (the reminder, a recap whose titles were made one-line where it
    # was built): escaped, not quoted.
    message = escape_invisible(claim_text(claim, "message"))
    if not message.strip():
        return "", []
    recap = claim.get("lifecycle") == "post-compact"

    def marker(chars: int) -> str:
        if recap:
            return hook_recap_marker(session_id, socket_path, cut_chars=chars, cut_of="it")
        return hook_cut_marker(session_id, socket_path, chars)

    text = HOOK_PREFIX + message + hook_action_step(session_id, socket_path)
    return truncate_counted(text, cap, marker), []


def render_hook(
    claim: Claim,
    socket_path: str,
    *,
    more_deferred: bool,
    cap: int = MAX_ADDITIONAL_CONTEXT,
) -> str:
    """The hook's ``additionalContext`` for ``claim`` (see :func:`render_hook_shown`)."""
    return render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)[0]


def render_channel_shown(
    claim: Claim,
    socket_path: str,
    *,
    more_deferred: bool,
    cap: int = MAX_CHANNEL_CONTENT,
) -> tuple[str, dict[str, str], list[str]]:
    """The channel push's ``content`` and ``meta``, and the ids of the events it shows.

    ``content`` is ``""`` (and no ids) for a reminder whose message is blank.
    """
    session_id = claim_text(claim, "sessionId")
    events = claim_events(claim)
    meta = channel_meta(claim)
    if events:
        content, shown = render_body(
            claim,
            socket_path,
            packing=CHANNEL_PACKING,
            more_deferred=more_deferred,
            cap=cap,
        )
        return content, meta, shown
    message = sanitize_channel_own(claim_text(claim, "message"))
    if not message.strip():
        return "", meta, []
    text = message + channel_action_step(session_id, socket_path)
    return (
        truncate_counted(
            text, cap, lambda chars: channel_cut_marker(session_id, socket_path, chars)
        ),
        meta,
        [],
    )


def render_channel(
    claim: Claim,
    socket_path: str,
    *,
    more_deferred: bool,
    cap: int = MAX_CHANNEL_CONTENT,
) -> tuple[str, dict[str, str]]:
    """The channel push's ``(content, meta)`` for ``claim`` (see :func:`render_channel_shown`)."""
    content, meta, _shown = render_channel_shown(
        claim, socket_path, more_deferred=more_deferred, cap=cap
    )
    return content, meta

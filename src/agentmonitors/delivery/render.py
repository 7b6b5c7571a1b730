"""Render a ``DeliveryClaim`` for the hook or the MCP channel, and size it.

See docs/architecture.md, "Text and sizes".

Claims are plain mappings as they arrive over IPC. Every renderer also reports which
events it showed, so the caller can hold "claimed set == rendered set" before it
commits. Standard library only, nothing imported at module level: this runs on the
hook path of every prompt and tool call.
"""

from __future__ import annotations

from agentmonitors.delivery.meta import channel_meta
from agentmonitors.delivery.text import (
    HOOK_LEAD_LINE,
    HOOK_PREFIX,
    MAX_ADDITIONAL_CONTEXT,
    MAX_CHANNEL_CONTENT,
    ack_line,
    bound_diff,
    channel_action_step,
    channel_cut_marker,
    channel_deferred_marker,
    counted_cut,
    cut,
    diff_command,
    hook_action_step,
    hook_cut_marker,
    hook_deferred_marker,
    hook_recap_marker,
    inline,
    sanitize_channel,
    sanitize_channel_own,
    sanitize_hook,
    truncate_counted,
)
from agentmonitors.untrusted import clean_line, escape_invisible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    Claim = Mapping[str, Any]
    Event = Mapping[str, Any]

__all__ = [
    "CHANNEL",
    "HOOK",
    "channel_meta",
    "claim_fit",
    "event_block",
    "fit",
    "footer",
    "header_fixed_point",
    "max_events",
    "render_channel",
    "render_channel_shown",
    "render_hook",
    "render_hook_shown",
]

HOOK = "hook"
CHANNEL = "channel"

_EVENT_IDS_CLAUSE = " --event-ids "


def _text(mapping: Mapping[str, Any], key: str) -> str:
    value = mapping.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _events(claim: Claim) -> list[Event]:
    events = claim.get("events")
    return list(events) if isinstance(events, list | tuple) else []


# The fields a block is made of. Sizing renders the same events several times in one
# delivery (the preview, the reserved claim, the text), so blocks are kept by content.
_BLOCK_FIELDS = (
    "monitorId",
    "urgency",
    "title",
    "body",
    "summary",
    "objectDetail",
    "diffText",
    "objectKey",
    "eventId",
)
_BLOCKS: dict[tuple[object, ...], str] = {}
_MAX_BLOCKS = 256


def event_block(event: Event, sanitize: Callable[[str], str]) -> str:
    """One event's block, every field passed through the transport's ``sanitize``.

    ``objectDetail`` (falling back to ``summary`` when absent) is shown unless it
    repeats the title or the body; ``summary`` is shown unless it repeats the title,
    the body or the detail line. ``Changes:`` appears only for a non-blank diff,
    which is bounded (:data:`MAX_EVENT_DIFF`) before it is sanitized.
    """
    key = (sanitize, *(event.get(name) for name in _BLOCK_FIELDS))
    try:
        block = _BLOCKS.get(key)
    except TypeError:  # a field that is not hashable: render it, keep nothing
        return _event_block(event, sanitize)
    if block is None:
        block = _event_block(event, sanitize)
        if len(_BLOCKS) >= _MAX_BLOCKS:
            _BLOCKS.clear()
        _BLOCKS[key] = block
    return block


def _event_block(event: Event, sanitize: Callable[[str], str]) -> str:
    # Every field is untrusted (docs/architecture.md, "Text and sizes"): the one-line
    # fields go through the line rule first, so a break in a title or a monitor name
    # is shown escaped rather than starting a line; ``sanitize`` (the block rule plus
    # the transport's own) then quotes a line that reads as ours. Escaping happens
    # here, before any length is measured, so the caps hold for what is printed.
    def line(key: str) -> str:
        return sanitize(clean_line(_text(event, key)))

    title = line("title")
    body = sanitize(_text(event, "body"))
    # A summary that defaults to a body of several lines is that body with its breaks
    # escaped: a repeat all the same, never printed twice.
    shown = (title, body, line("body"))
    summary = line("summary")
    raw_detail = event.get("objectDetail")
    detail = summary if raw_detail is None else line("objectDetail")
    lines = [f"### {clean_line(_text(event, 'monitorId'))} ({clean_line(_text(event, 'urgency'))})"]
    lines.append(title)
    if detail and detail not in shown:
        lines.append(detail)
    if summary and summary not in (*shown, detail):
        lines.append(summary)
    block = "\n".join(lines) + "\n\n" + body
    diff = _text(event, "diffText")
    if diff.strip():
        monitor_id = _text(event, "monitorId")
        whole = diff_command(
            monitor_id, _text(event, "objectKey") or monitor_id, _text(event, "eventId")
        )
        block += "\n\nChanges:\n" + bound_diff(sanitize(diff), whole)
    return block


def footer(reminder: str | None, session_id: str, socket_path: str, packer: str) -> str:
    """The coalesced-reminder footer (``""`` without one); its length is reserved out of the cap."""
    if not reminder:
        return ""
    # The reminder is our own line: escaped, never quoted as one that reads as ours.
    if packer == HOOK:
        return "\n\n" + escape_invisible(reminder) + hook_action_step(session_id, socket_path)
    return "\n\n" + sanitize_channel_own(reminder) + channel_action_step(session_id, socket_path)


class _Layout:
    """A claim's blocks laid out for one transport, with lengths precomputed.

    The hook's header names the ids of the blocks it shows, so its length grows with
    the number of blocks; the channel has no header. ``count`` is the header fixed
    point (for the channel, plain whole-block packing). The marker of a cut says how many
    updates it left out, so its length depends on how many blocks are shown too
    (:meth:`reserve`).
    """

    __slots__ = (
        "_header_base",
        "_id_lens",
        "blocks",
        "hook",
        "ids",
        "joiner",
        "pending",
        "recap",
        "session_id",
        "socket_path",
    )

    def __init__(
        self,
        events: Sequence[Event],
        packer: str,
        session_id: str,
        socket_path: str,
        *,
        recap: bool = False,
        pending: int | None = None,
    ) -> None:
        if packer not in (HOOK, CHANNEL):
            raise ValueError(f"unknown packer {packer!r}")
        self.hook = packer == HOOK
        self.session_id = session_id
        self.socket_path = socket_path
        self.recap = recap
        # The session's unacknowledged updates, these blocks' among them (None: unknown).
        self.pending = pending
        sanitize = sanitize_hook if self.hook else sanitize_channel
        self.blocks = [event_block(event, sanitize) for event in events]
        self.ids = [_text(event, "eventId") for event in events]
        self.joiner = "\n" if self.hook else "\n\n"
        if self.hook:
            self._header_base = len(self.header(0))
            self._id_lens = [len(inline(event_id)) for event_id in self.ids]
        else:
            self._header_base = 0
            self._id_lens = []

    def deferred(self, shown: int, cut_chars: int | None = None) -> str:
        """The marker of a delivery that shows ``shown`` blocks and defers the rest (a
        recap's also counts ``cut_chars``, cut from the block it shows)."""
        floor = 0 if cut_chars is not None else 1
        left = None if self.pending is None else max(floor, self.pending - shown)
        if not self.hook:
            return channel_deferred_marker(self.session_id, self.socket_path, left)
        if self.recap:
            return hook_recap_marker(self.session_id, self.socket_path, left, cut_chars)
        return hook_deferred_marker(self.session_id, self.socket_path, left)

    def reserve(self, cap: int) -> int:
        """The most blocks that fit in ``cap`` beside the marker counting the rest.

        Fewer blocks shown leave more to count, so the marker is longest for none: start
        there, then widen while a shorter count lets more blocks in. Each step's marker is
        no longer than the one it was sized with, so every step fits.
        """
        shown = self.count(cap - len(self.deferred(0)))
        while True:
            wider = self.count(cap - len(self.deferred(shown)))
            if wider <= shown:
                return shown
            shown = wider

    def header(self, k: int) -> str:
        if not self.hook:
            return ""
        line = ack_line(self.session_id, self.socket_path, self.ids[:k])
        return f"{HOOK_LEAD_LINE}\n{line}\n\n"

    def _header_len(self, k: int, id_chars: int) -> int:
        if not self.hook or k == 0:
            return self._header_base
        # ',' survives the sanitizer, so S(','.join(ids)) is ','.join(S(id) for id in ids).
        return self._header_base + len(_EVENT_IDS_CLAUSE) + id_chars + (k - 1)

    def count(self, cap: int) -> int:
        """The largest k (n…0) for which header(k) + the first k blocks fit in ``cap``."""
        totals = [self._header_len(0, 0)]
        body = 0
        id_chars = 0
        for k, block in enumerate(self.blocks, start=1):
            body += len(block) + (len(self.joiner) if k > 1 else 0)
            if self.hook:
                id_chars += self._id_lens[k - 1]
            totals.append(self._header_len(k, id_chars) + body)
        for k in range(len(self.blocks), 0, -1):
            if totals[k] <= cap:
                return k
        return 0

    def text(self, k: int) -> str:
        return self.header(k) + self.joiner.join(self.blocks[:k])

    def fit(self, more_deferred: bool, cap: int) -> tuple[bool, int, int, int]:
        """``(fits, included, whole, reserved)``: :func:`fit` plus both packings."""
        n = len(self.blocks)
        whole = self.count(cap)
        if whole == n and not more_deferred:
            return True, n, whole, whole
        reserved = self.reserve(cap)
        included = max(1, reserved)
        return included == n, included, whole, reserved


def header_fixed_point(events: Sequence[Event], session_id: str, socket_path: str, cap: int) -> int:
    """How many leading events the hook can show whole, with a header naming exactly them."""
    return _Layout(events, HOOK, session_id, socket_path).count(cap)


def fit(
    events: Sequence[Event],
    *,
    more_deferred: bool,
    cap: int,
    packer: str,
    session_id: str,
    socket_path: str,
    pending: int | None = None,
) -> tuple[bool, int]:
    """``(fits, included)`` for these events under ``cap``.

    All fit and nothing else is deferred: fits. Otherwise the blocks are re-packed
    under ``cap − len(M1)`` (``C1`` for the channel), ``included = max(1, k)``, and
    the claim fits iff every event is included. ``cap`` must already be net of the
    coalesced footer (see :func:`footer`). ``pending`` is the session's unacknowledged
    updates, which the marker counts (None: a marker without a count).
    """
    if not events:
        return True, 0
    layout = _Layout(events, packer, session_id, socket_path, pending=pending)
    fits, included, _whole, _reserved = layout.fit(more_deferred, cap)
    return fits, included


# A preview does not carry the session's count: its marker is measured with one this
# long, longer than any real count, so the claim sized from it fits with its own.
_PREVIEW_PENDING = 10**9


def max_events(
    preview: Sequence[Event], *, cap: int, packer: str, session_id: str, socket_path: str
) -> int:
    """Whole blocks of ``preview`` that fit under ``cap`` (a marker reserved when not all do)."""
    if not preview:
        return 0
    return fit(
        preview,
        more_deferred=False,
        cap=cap,
        packer=packer,
        session_id=session_id,
        socket_path=socket_path,
        pending=_PREVIEW_PENDING,
    )[1]


def _claim_layout(
    claim: Claim, socket_path: str, packer: str, cap: int
) -> tuple[_Layout, str, int, bool]:
    """The claim's layout, its footer, the cap left for blocks and markers, and recap-ness."""
    session_id = _text(claim, "sessionId")
    recap = packer == HOOK and claim.get("lifecycle") == "post-compact"
    counts = claim.get("unreadCounts")
    total = counts.get("total") if isinstance(counts, dict) else None
    pending = total if isinstance(total, int) and not isinstance(total, bool) else None
    layout = _Layout(_events(claim), packer, session_id, socket_path, recap=recap, pending=pending)
    tail = footer(_text(claim, "coalescedReminder"), session_id, socket_path, packer)
    return layout, tail, cap - len(tail), recap


def claim_fit(
    claim: Claim, socket_path: str, *, packer: str, more_deferred: bool, cap: int
) -> tuple[bool, int]:
    """:func:`fit` for a reserved claim, measured exactly as its render will be.

    The claim's own coalesced footer is reserved out of ``cap`` and a recap reserves
    room for M3, so "fits" here means the renderer shows every event of the claim.
    """
    layout, _tail, budget, _recap = _claim_layout(claim, socket_path, packer, cap)
    if not layout.blocks:
        return True, 0
    fits, included, _whole, _reserved = layout.fit(more_deferred, budget)
    return fits, included


def _render_body(
    claim: Claim,
    socket_path: str,
    *,
    packer: str,
    more_deferred: bool,
    cap: int,
) -> tuple[str, list[str]]:
    layout, tail, budget, _recap = _claim_layout(claim, socket_path, packer, cap)
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


def _cut_marker(layout: _Layout, shown: int, others: bool, chars: int) -> str:
    """The markers of a first block cut short: its own cut (``chars`` left out), then
    what else waits."""
    if layout.recap:
        return layout.deferred(shown, chars)
    if layout.hook:
        marker = hook_cut_marker(layout.session_id, layout.socket_path, chars)
    else:
        marker = channel_cut_marker(layout.session_id, layout.socket_path, chars)
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
    session_id = _text(claim, "sessionId")
    events = _events(claim)
    if events:
        return _render_body(
            claim,
            socket_path,
            packer=HOOK,
            more_deferred=more_deferred,
            cap=cap,
        )
    # A message is ours (the reminder, a recap whose titles were made one-line where it
    # was built): escaped, not quoted.
    message = escape_invisible(_text(claim, "message"))
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
    session_id = _text(claim, "sessionId")
    events = _events(claim)
    meta = channel_meta(claim)
    if events:
        content, shown = _render_body(
            claim,
            socket_path,
            packer=CHANNEL,
            more_deferred=more_deferred,
            cap=cap,
        )
        return content, meta, shown
    message = sanitize_channel_own(_text(claim, "message"))
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

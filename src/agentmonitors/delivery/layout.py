"""Lay a claim's event blocks out under a transport's cap: the sizing arithmetic.

See docs/architecture.md, "Text and sizes". Blocks are laid out by the transport's
:class:`~agentmonitors.delivery.packing.Packing`; ``delivery/render.py`` turns a layout
into text and ``delivery/sizing.py`` reserves as many events as it fits. Claims are plain
mappings as they arrive over IPC. Standard library only.
"""

from __future__ import annotations

from agentmonitors.delivery.packing import HOOK_PACKING, Packing
from agentmonitors.delivery.text import bound_diff, diff_command, inline
from agentmonitors.untrusted import clean_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    Claim = Mapping[str, Any]
    Event = Mapping[str, Any]

__all__ = [
    "Layout",
    "claim_events",
    "claim_fit",
    "claim_layout",
    "claim_text",
    "event_block",
    "fit",
    "header_fixed_point",
    "max_events",
]

_EVENT_IDS_CLAUSE = " --event-ids "


def claim_text(mapping: Mapping[str, Any], key: str) -> str:
    value = mapping.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def claim_events(claim: Claim) -> list[Event]:
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
        return sanitize(clean_line(claim_text(event, key)))

    title = line("title")
    body = sanitize(claim_text(event, "body"))
    # A summary that defaults to a body of several lines is that body with its breaks
    # escaped: a repeat all the same, never printed twice.
    shown = (title, body, line("body"))
    summary = line("summary")
    raw_detail = event.get("objectDetail")
    detail = summary if raw_detail is None else line("objectDetail")
    monitor = clean_line(claim_text(event, "monitorId"))
    lines = [f"### {monitor} ({clean_line(claim_text(event, 'urgency'))})"]
    lines.append(title)
    if detail and detail not in shown:
        lines.append(detail)
    if summary and summary not in (*shown, detail):
        lines.append(summary)
    block = "\n".join(lines) + "\n\n" + body
    diff = claim_text(event, "diffText")
    if diff.strip():
        monitor_id = claim_text(event, "monitorId")
        whole = diff_command(
            monitor_id, claim_text(event, "objectKey") or monitor_id, claim_text(event, "eventId")
        )
        block += "\n\nChanges:\n" + bound_diff(sanitize(diff), whole)
    return block


class Layout:
    """A claim's blocks laid out by one transport's packing, with lengths precomputed.

    A packing whose header names the ids of the blocks it shows (the hook's) makes the
    header grow with the number of blocks; ``count`` is the header fixed point (without
    such a header, plain whole-block packing). The marker of a cut says how many updates
    it left out, so its length depends on how many blocks are shown too (:meth:`reserve`).
    """

    __slots__ = (
        "_header_base",
        "_id_lens",
        "blocks",
        "ids",
        "packing",
        "pending",
        "recap",
        "session_id",
        "socket_path",
    )

    def __init__(
        self,
        events: Sequence[Event],
        packing: Packing,
        session_id: str,
        socket_path: str,
        *,
        recap: bool = False,
        pending: int | None = None,
    ) -> None:
        self.packing = packing
        self.session_id = session_id
        self.socket_path = socket_path
        self.recap = recap
        # The session's unacknowledged updates, these blocks' among them (None: unknown).
        self.pending = pending
        self.blocks = [event_block(event, packing.sanitize) for event in events]
        self.ids = [claim_text(event, "eventId") for event in events]
        if packing.names_shown_ids:
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
        recap_marker = self.packing.recap_marker
        if self.recap and recap_marker is not None:
            return recap_marker(self.session_id, self.socket_path, left, cut_chars)
        return self.packing.deferred_marker(self.session_id, self.socket_path, left)

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
        return self.packing.header(self.session_id, self.socket_path, self.ids[:k])

    def _header_len(self, k: int, id_chars: int) -> int:
        if not self.packing.names_shown_ids or k == 0:
            return self._header_base
        # ',' survives the sanitizer, so S(','.join(ids)) is ','.join(S(id) for id in ids).
        return self._header_base + len(_EVENT_IDS_CLAUSE) + id_chars + (k - 1)

    def count(self, cap: int) -> int:
        """The largest k (n…0) for which header(k) + the first k blocks fit in ``cap``."""
        totals = [self._header_len(0, 0)]
        body = 0
        id_chars = 0
        joiner = len(self.packing.joiner)
        for k, block in enumerate(self.blocks, start=1):
            body += len(block) + (joiner if k > 1 else 0)
            if self._id_lens:
                id_chars += self._id_lens[k - 1]
            totals.append(self._header_len(k, id_chars) + body)
        for k in range(len(self.blocks), 0, -1):
            if totals[k] <= cap:
                return k
        return 0

    def text(self, k: int) -> str:
        return self.header(k) + self.packing.joiner.join(self.blocks[:k])

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
    return Layout(events, HOOK_PACKING, session_id, socket_path).count(cap)


def fit(
    events: Sequence[Event],
    *,
    more_deferred: bool,
    cap: int,
    packing: Packing,
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
    layout = Layout(events, packing, session_id, socket_path, pending=pending)
    fits, included, _whole, _reserved = layout.fit(more_deferred, cap)
    return fits, included


# A preview does not carry the session's count: its marker is measured with one this
# long, longer than any real count, so the claim sized from it fits with its own.
_PREVIEW_PENDING = 10**9


def max_events(
    preview: Sequence[Event], *, cap: int, packing: Packing, session_id: str, socket_path: str
) -> int:
    """Whole blocks of ``preview`` that fit under ``cap`` (a marker reserved when not all do)."""
    if not preview:
        return 0
    return fit(
        preview,
        more_deferred=False,
        cap=cap,
        packing=packing,
        session_id=session_id,
        socket_path=socket_path,
        pending=_PREVIEW_PENDING,
    )[1]


def claim_layout(
    claim: Claim, socket_path: str, packing: Packing, cap: int
) -> tuple[Layout, str, int, bool]:
    """The claim's layout, its footer, the cap left for blocks and markers, and recap-ness."""
    session_id = claim_text(claim, "sessionId")
    recap = packing.recap_marker is not None and claim.get("lifecycle") == "post-compact"
    counts = claim.get("unreadCounts")
    total = counts.get("total") if isinstance(counts, dict) else None
    pending = total if isinstance(total, int) and not isinstance(total, bool) else None
    layout = Layout(
        claim_events(claim), packing, session_id, socket_path, recap=recap, pending=pending
    )
    tail = packing.footer(claim_text(claim, "coalescedReminder"), session_id, socket_path)
    return layout, tail, cap - len(tail), recap


def claim_fit(
    claim: Claim, socket_path: str, *, packing: Packing, more_deferred: bool, cap: int
) -> tuple[bool, int]:
    """:func:`fit` for a reserved claim, measured exactly as its render will be.

    The claim's own coalesced footer is reserved out of ``cap`` and a recap reserves
    room for M3, so "fits" here means the renderer shows every event of the claim.
    """
    layout, _tail, budget, _recap = claim_layout(claim, socket_path, packing, cap)
    if not layout.blocks:
        return True, 0
    fits, included, _whole, _reserved = layout.fit(more_deferred, budget)
    return fits, included

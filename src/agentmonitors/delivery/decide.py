"""What a claim at each lifecycle would surface, decided without writing anything.

A :class:`Decision` carries the rendered ``DeliveryClaim`` and the candidate rows a
claim (or a reservation's commit) marks claimed; :func:`apply` is the write half.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from agentmonitors.delivery import states
from agentmonitors.delivery.collapse import (
    CollapseView,
    apply_collapse,
    collapse_view,
    rediffs,
)
from agentmonitors.delivery.records import (
    HIGH_URGENCY_SETTLE_MS,
    MAX_RECAP_EVENTS,
    DeliveryRow,
    Lifecycle,
    summarize,
    summary_json,
)
from agentmonitors.delivery.sessions import stamp_recap
from agentmonitors.delivery.vocabulary import REMINDER
from agentmonitors.delivery.wire import DeliveryClaim, EventSummary, UnreadCounts
from agentmonitors.fastpath.lean_dataclass import dataclass, field, replace


@dataclass(frozen=True)
class SessionView:
    """One session's unread rows and live leases at one instant."""

    session_id: str
    unread: list[DeliveryRow]
    leased: frozenset[str]
    now_ms: int
    # Band slices, computed once per view: a decision asks for them several times
    # and a session may hold thousands of unread rows.
    _bands: dict[str, list[DeliveryRow]] = field(default_factory=dict, compare=False, repr=False)
    _claimable: dict[str, list[DeliveryRow]] = field(
        default_factory=dict, compare=False, repr=False
    )

    _batches: dict[int | None, HighBatch | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    # The settled high rows and their collapse, shared by every batch size asked of
    # this view (a preview and a reservation ask for different sizes).
    _settled: list[tuple[list[DeliveryRow], CollapseView]] = field(
        default_factory=list, compare=False, repr=False
    )

    @classmethod
    def read(
        cls, conn: sqlite3.Connection, session_id: str, leased: frozenset[str], now_ms: int
    ) -> SessionView:
        """The view at ``now_ms``; the same object while nothing was written in between.

        A hook asks several questions of one instant (preview, reminder, reserve);
        answering them from one view computes each band and batch once.
        """
        version = (conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0])
        key = (id(conn), session_id, leased, now_ms, version)
        cached = _LAST_VIEW.get(session_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        view = cls(session_id, states.unread_rows(conn, session_id), leased, now_ms)
        if len(_LAST_VIEW) > 256:
            _LAST_VIEW.clear()
        _LAST_VIEW[session_id] = (key, view)
        return view

    def unread_band(self, urgency: str) -> list[DeliveryRow]:
        bands = self._bands
        if not bands:
            bands.update(low=[], normal=[], high=[])
            for row in self.unread:
                found = bands.get(row.urgency)
                if found is None:
                    found = bands[row.urgency] = []
                found.append(row)
        return bands.get(urgency, [])

    def pending_band(self, urgency: str) -> list[DeliveryRow]:
        """Never-surfaced rows of a band, leased ones included."""
        return states.pending(self.unread_band(urgency))

    def claimable(self, urgency: str) -> list[DeliveryRow]:
        """``pendingForClaim``: pending rows of a band minus leased ones."""
        if urgency not in self._claimable:
            self._claimable[urgency] = states.pending_for_claim(
                self.unread_band(urgency), set(self.leased)
            )
        return self._claimable[urgency]

    def leased_count(self, urgency: str) -> int:
        return sum(1 for row in self.pending_band(urgency) if row.id in self.leased)

    def settled_high(self) -> list[DeliveryRow]:
        return self._settled_collapse()[0]

    def _settled_collapse(self) -> tuple[list[DeliveryRow], CollapseView]:
        """The settled high rows and their collapse."""
        if not self._settled:
            # ``DeliveryRow.settled``, inlined: this runs over every claimable high row.
            cutoff, now = self.now_ms - HIGH_URGENCY_SETTLE_MS, self.now_ms
            settled = [
                row
                for row in self.claimable("high")
                if not cutoff < row.event.created_at * 1000 <= now
            ]
            self._settled.append((settled, collapse_view(settled)))
        return self._settled[0]

    def reminder_due(self, urgency: str) -> bool:
        """Coalesced-until-ack: every unread row of the band is claimable."""
        claimable = self.claimable(urgency)
        return bool(claimable) and len(claimable) == len(self.unread_band(urgency))

    def counts(self) -> UnreadCounts:
        low, normal, high = (len(self.unread_band(level)) for level in ("low", "normal", "high"))
        return {"low": low, "normal": normal, "high": high, "total": low + normal + high}


_LAST_VIEW: dict[str, tuple[tuple[object, ...], SessionView]] = {}


@dataclass(frozen=True)
class Decision:
    session_id: str
    lifecycle: Lifecycle
    candidates: tuple[DeliveryRow, ...]
    is_recap: bool
    claim: DeliveryClaim
    # The candidates whose change the claim shows (an event block, its diff): what the
    # session has seen once it is written. A reminder only counts its rows, so the
    # session's diff base stays where it was for them.
    seen: tuple[DeliveryRow, ...] = ()

    def seen_only(self, shown_ids: Sequence[str]) -> Decision:
        """This decision with only the events a rendered text printed counted as seen.

        A text cut to its cap (a recap, a lone block cut short) shows fewer events than
        the claim holds; the session's diff base moves for those alone (docs/architecture.md,
        "The life of one event"), with the rows each shown event stands for.
        """
        shown = set(shown_ids)
        groups = {row.group for row in self.seen if row.id in shown and row.group is not None}
        kept = tuple(
            row
            for row in self.seen
            if row.id in shown or (row.group is not None and row.group in groups)
        )
        return self if len(kept) == len(self.seen) else replace(self, seen=kept)


@dataclass(frozen=True)
class HighBatch:
    candidates: list[DeliveryRow]  # the surfaced groups' settled rows, intermediates included
    shown: list[DeliveryRow]  # one per group, oldest first
    diffs: dict[str, str]  # re-anchored deltas of collapsed survivors

    def summaries(self) -> list[EventSummary]:
        return [summary_json(row, self.diffs.get(row.id)) for row in self.shown]


def high_batch(
    conn: sqlite3.Connection, view: SessionView, max_events: int | None
) -> HighBatch | None:
    """The settled high rows a claim would surface, capped to ``max_events`` groups."""
    if max_events in view._batches:
        return view._batches[max_events]
    batch = _high_batch(conn, view, max_events)
    view._batches[max_events] = batch
    return batch


def _high_batch(
    conn: sqlite3.Connection, view: SessionView, max_events: int | None
) -> HighBatch | None:
    settled, collapsed = view._settled_collapse()
    if not settled:
        return None
    representatives = collapsed.delivered
    limit = len(representatives) if max_events is None else max(1, max_events)
    if limit >= len(representatives):
        # Every group surfaces: the candidates are all settled rows, collapsed already.
        candidates, shown = list(settled), collapsed
    else:
        candidates = collapsed.rows_of(representatives[:limit])
        shown = collapse_view(candidates)
    return HighBatch(candidates, shown.delivered, rediffs(conn, view.session_id, shown))


def _claim(
    view: SessionView,
    lifecycle: Lifecycle,
    mode: str,
    urgency: str | None,
    message: str,
    events: list[EventSummary],
) -> DeliveryClaim:
    if urgency is None:  # a recap has no urgency; key order: docs/compatibility.md
        return {
            "sessionId": view.session_id,
            "mode": mode,
            "lifecycle": lifecycle,
            "message": message,
            "unreadCounts": view.counts(),
            "events": events,
        }
    return {
        "sessionId": view.session_id,
        "mode": mode,
        "urgency": urgency,
        "lifecycle": lifecycle,
        "message": message,
        "unreadCounts": view.counts(),
        "events": events,
    }


def _turn_interruptible(
    conn: sqlite3.Connection, view: SessionView, max_events: int | None
) -> Decision | None:
    lifecycle: Lifecycle = "turn-interruptible"
    normal = view.claimable("normal")
    due = view.reminder_due("normal")
    batch = high_batch(conn, view, max_events)
    if batch is not None:
        message = summarize(batch.shown)
        candidates = list(batch.candidates)
        seen = tuple(candidates)
        claim = _claim(view, lifecycle, "delivery", "high", message, batch.summaries())
        if due:
            claim["message"] = f"{message}\n\n{REMINDER}"
            claim["coalescedReminder"] = REMINDER
            claim["coalescedNormalCount"] = len(normal)
            candidates += normal
        return Decision(view.session_id, lifecycle, tuple(candidates), False, claim, seen)
    if due and not view.claimable("high"):
        claim = _claim(view, lifecycle, "delivery", "normal", REMINDER, [])
        return Decision(view.session_id, lifecycle, tuple(normal), False, claim)
    return None


def _turn_idle(view: SessionView) -> Decision | None:
    if not view.reminder_due("low"):
        return None
    claim = _claim(view, "turn-idle", "delivery", "low", REMINDER, [])
    return Decision(view.session_id, "turn-idle", tuple(view.claimable("low")), False, claim)


def recap_message(session_id: str, shown: list[DeliveryRow], left_out: int = 0) -> str:
    # No ``--format json`` here: that is complete for scripts, while the agent's own
    # format is bounded (the newest 50 and "N more"), so a backlog cannot flood its context.
    more = [f"… and {left_out} older unread not listed here."] if left_out else []
    return "\n".join(
        [
            "Recap of recent AgentMon activity since your last recap:",
            summarize(shown),
            *more,
            f"Run `agentmonitors events list --session {session_id}` for recent history.",
            f"Run `agentmonitors events list --session {session_id} --unread` for unread details.",
        ]
    )


def _post_compact(conn: sqlite3.Connection, view: SessionView) -> Decision | None:
    if not view.unread:
        return None
    collapsed = collapse_view(view.unread)
    diffs = rediffs(conn, view.session_id, collapsed)
    shown = collapsed.delivered[-MAX_RECAP_EVENTS:]
    events = [summary_json(row, diffs.get(row.id)) for row in shown]
    message = recap_message(view.session_id, shown, len(collapsed.delivered) - len(shown))
    claim = _claim(view, "post-compact", "recap", None, message, events)
    seen = tuple(collapsed.rows_of(shown))
    return Decision(view.session_id, "post-compact", tuple(view.unread), True, claim, seen)


def decide(
    conn: sqlite3.Connection,
    session: sqlite3.Row,
    lifecycle: Lifecycle,
    max_events: int | None,
    leased: frozenset[str],
    now_ms: int,
) -> Decision | None:
    """The claim a session would get now, or None; subagent sessions never get one."""
    if session["role"] != "lead":
        return None
    view = SessionView.read(conn, str(session["id"]), leased, now_ms)
    if lifecycle == "turn-interruptible":
        return _turn_interruptible(conn, view, max_events)
    if lifecycle == "turn-idle":
        return _turn_idle(view)
    return _post_compact(conn, view)


def apply(conn: sqlite3.Connection, decision: Decision, now_ms: int) -> None:
    """Collapse, claim every candidate, and stamp a recap (inside the caller's transaction)."""
    candidates = list(decision.candidates)
    apply_collapse(conn, decision.session_id, candidates, now_ms)
    states.mark_claimed(
        conn, decision.session_id, candidates, decision.lifecycle, now_ms, decision.seen
    )
    if decision.is_recap:
        stamp_recap(conn, decision.session_id, now_ms)

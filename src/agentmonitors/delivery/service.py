"""The daemon's delivery core: sessions, claims, reservations, acks and hook-state files.

Every decision that leads to a write is made inside the same ``Database.write()``
transaction that applies it (and leases are taken or dropped under that lock), so two
simultaneous claims can never surface the same row and a reminder fires at most once.
Hook-state files are refreshed after the transaction commits; a failure to write one
is logged, never raised: the file is a cache and the claim already happened.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from agentmonitors.clock import Clock, ManualClock, SystemClock
from agentmonitors.delivery import sessions, states, unread
from agentmonitors.delivery.decide import Decision, SessionView, apply, decide, high_batch
from agentmonitors.delivery.diagnose import cap_hold, diagnose
from agentmonitors.delivery.events import EventQuery, list_events
from agentmonitors.delivery.hook_state import hook_state, write_private_json
from agentmonitors.delivery.pushes import PushLedger
from agentmonitors.delivery.records import (
    RESERVATION_TTL_MS,
    ROLES,
    Lifecycle,
    check_lifecycle,
    session_json,
)
from agentmonitors.delivery.reservations import Lease, ReservationRegistry
from agentmonitors.delivery.transports.registry import transport as transport_named
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER, REMINDER
from agentmonitors.delivery.wire import (
    AckResult,
    DeliveryClaim,
    EventRecord,
    EventSummary,
    Reservation,
    SessionRecord,
)
from agentmonitors.paths import default_hook_state_path
from agentmonitors.store.database import Database

log = logging.getLogger("agentmonitors.delivery")

Decider = Callable[[Any, sqlite3.Row, frozenset[str], int], "Decision | None"]
"""``(connection, session row, leased ids, now ms)`` → the decision to reserve, or None."""


class DeliveryService:
    """Everything the ``session.*``, ``events.*`` and ``hook.*`` IPC methods do."""

    def __init__(
        self,
        db: Database,
        clock: Clock | None = None,
        *,
        reservation_ttl_ms: int = RESERVATION_TTL_MS,
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.reservations = ReservationRegistry(self.clock, reservation_ttl_ms)
        self.pushes = PushLedger(self.clock)
        # How a state change asks for a hook-state refresh. Immediate by default; the
        # daemon defers it until after the reply, so a hook never waits on a file
        # nobody reads on its path.
        self.request_refresh: Callable[[str], None] = self.refresh_hook_state
        self._hook_state_written: dict[str, dict[str, Any]] = {}
        # The daemon's project folder: once it is gone, a hook-state write would
        # recreate folders of a deleted project (and race the user's ``rm -r``).
        self.project_folder: str | None = None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """``db.write()``, forgetting the kept unread rows if it does not commit.

        The rows are carried across this service's own writes (``unread.carry``); a
        rollback undoes the rows' changes but not the connection's change count, so
        kept rows could otherwise describe writes that never happened.
        """
        try:
            with self.db.write() as conn:
                try:
                    yield conn
                except BaseException:
                    unread.forget()  # under the write lock, before the rollback
                    raise
        except BaseException:
            unread.forget()
            raise

    @contextlib.contextmanager
    def one_instant(self) -> Iterator[None]:
        """Answer every question asked inside at the same ``now``.

        A transport sizing a delivery asks for a preview, the reminder preview and a
        reservation in quick succession; pinning the clock lets them share one view
        of the session instead of recomputing it for a few milliseconds' difference.
        """
        real = self.clock
        self.clock = ManualClock(real.now_ms())
        try:
            yield
        finally:
            self.clock = real

    # ------------------------------------------------------------------ sessions

    def open_session(
        self,
        host_session_id: str,
        *,
        adapter: str = CLAUDE_ADAPTER,
        agent_identity: str | None = None,
        hook_state_path: str | None = None,
        workspace_path: str | None = None,
        role: str | None = None,
    ) -> SessionRecord:
        """Register or resume the ``(adapter, host session id)`` session.

        Omitted values take the Claude Code adapter's defaults (identity = host session
        id, hook state under the workspace, or this process's cwd). A resume keeps
        ``baseline_at`` and, when not given, the stored role and workspace.
        """
        if role is not None and role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        spec = sessions.SessionInput(
            adapter=adapter,
            host_session_id=host_session_id,
            agent_identity=agent_identity if agent_identity is not None else host_session_id,
            hook_state_path=hook_state_path
            if hook_state_path is not None
            else default_hook_state_path(host_session_id, workspace_path),
            workspace_path=workspace_path,
            role=role,
        )
        with self._write() as conn:
            row = sessions.open_session(conn, spec, self.clock.now_ms())
        self.request_refresh(str(row["id"]))
        return session_json(row)

    def close_session(self, session_id: str) -> SessionRecord:
        """Dormant, with its ephemeral monitors reaped; ``SessionNotFound`` if unknown."""
        with self._write() as conn:
            row = sessions.close_session(conn, session_id, self.clock.now_ms())
        self.request_refresh(session_id)
        return session_json(row)

    def get_session(self, session_id: str) -> SessionRecord:
        with self.db.read() as conn:
            return session_json(sessions.get_session(conn, session_id))

    def list_sessions(self) -> list[SessionRecord]:
        """Every session, most recently updated first."""
        with self.db.read() as conn:
            return [session_json(row) for row in sessions.list_sessions(conn)]

    def find_session(self, host_session_id: str) -> SessionRecord | None:
        """The session a host knows as ``host_session_id`` (the newest, across adapters)."""
        with self.db.read() as conn:
            row = sessions.find_by_host(conn, host_session_id)
        return None if row is None else session_json(row)

    def touch_session(self, session_id: str) -> None:
        with self._write() as conn:
            sessions.get_session(conn, session_id)
            sessions.touch_session(conn, session_id, self.clock.now_ms())

    # ------------------------------------------------------------------ events

    def list_events(self, query: EventQuery) -> list[EventRecord]:
        with self.db.read() as conn:
            return list_events(conn, query)

    def ack(self, session_id: str, event_ids: Sequence[str] | None = None) -> list[str]:
        """Acknowledge; the given ids that were never projected to this session."""
        return list(self.ack_counted(session_id, event_ids)["unknownEventIds"])

    def ack_counted(self, session_id: str, event_ids: Sequence[str] | None = None) -> AckResult:
        """Acknowledge these ids of the session, or every unread row except leased ones
        when ``event_ids`` is None. ``[]`` acknowledges nothing.

        Returns ``acknowledged`` (rows unacknowledged until now), ``heldByDelivery``
        (unread rows ack-all left alone because an in-flight delivery holds them) and
        ``unknownEventIds`` (given ids never projected to this session, left alone).
        """
        now = self.clock.now_ms()
        unknown: list[str] = []
        acknowledged = 0
        held = 0
        with self._write() as conn:
            sessions.get_session(conn, session_id)
            if event_ids:
                # Naming the events of a live channel push proves the host showed it.
                self._confirm_acked_pushes(conn, session_id, set(event_ids), now)
            if event_ids is None:
                leased = self.reservations.leased(session_id)
                unread = states.unread_ids(conn, session_id)
                ids = [event_id for event_id in unread if event_id not in leased]
                held = len(unread) - len(ids)
                folded = [
                    event_id
                    for event_id in states.folded_unacknowledged(conn, session_id)
                    if event_id not in leased
                ]
            else:
                ids, folded = list(event_ids), []
            if ids:
                unknown, acknowledged = states.acknowledge(conn, session_id, ids, now)
            if folded:
                states.acknowledge(conn, session_id, folded, now)
        self.request_refresh(session_id)
        return {"acknowledged": acknowledged, "heldByDelivery": held, "unknownEventIds": unknown}

    # ------------------------------------------------------------------ claims

    def claim(
        self, session_id: str, lifecycle: str, max_events: int | None = None
    ) -> DeliveryClaim | None:
        """Decide and apply in one transaction; the ``DeliveryClaim`` or None."""
        checked = check_lifecycle(lifecycle)
        now = self.clock.now_ms()
        with self._write() as conn:
            decision = self._decide(conn, session_id, checked, max_events, now)
            if decision is not None:
                apply(conn, decision, now)
        if decision is None:
            return None
        self.request_refresh(session_id)
        return decision.claim

    def reserve(
        self,
        session_id: str,
        lifecycle: str,
        max_events: int | None = None,
        *,
        transport: str = "hook",
    ) -> Reservation | None:
        """Decide like :meth:`claim` and lease the candidates instead of claiming them.

        A transport that commits when written (a hook), reserving for a session whose
        channel has never been confirmed, first voids that channel's leases: the host
        may be dropping its pushes, and the hook is the path that surely shows.
        """
        checked = check_lifecycle(lifecycle)

        def decided(
            conn: Any, session: sqlite3.Row, leased: frozenset[str], now: int
        ) -> Decision | None:
            return decide(conn, session, checked, max_events, leased, now)

        return self.reserve_decided(session_id, decided, transport=transport)

    def reserve_decided(
        self, session_id: str, decider: Decider, *, transport: str = "hook"
    ) -> Reservation | None:
        """:meth:`reserve` with the transport's own decision: ``decider(conn, session,
        leased, now)`` runs inside the write transaction, around the session's leases
        (the live line names what the hooks would coalesce, ``delivery/follow_decide.py``)."""
        now = self.clock.now_ms()
        with self._write() as conn:
            on_proof = transport_named(transport).commits_on_proof
            if not on_proof and not self.pushes.confirmed(session_id):
                for push in self.pushes.of_session(session_id):
                    self.reservations.remove(push.delivery_id)
            session = sessions.get_session(conn, session_id)
            leased = self.reservations.leased(session_id)
            # Decide before touching the session, as :meth:`_decide` does.
            decision = decider(conn, session, leased, now)
            sessions.touch_session(conn, session_id, now)
            reservation_id = None if decision is None else self.reservations.add(decision)
        if decision is None or reservation_id is None:
            return None
        self.request_refresh(session_id)
        return {"reservationId": reservation_id, "claim": decision.claim}

    def _decide(
        self,
        conn: Any,
        session_id: str,
        lifecycle: Lifecycle,
        max_events: int | None,
        now: int,
    ) -> Decision | None:
        """The claim the session would get now, around leased rows; touches the session."""
        session = sessions.get_session(conn, session_id)
        leased = self.reservations.leased(session_id)
        # Decide before touching the session: the touch is a write, and the unread rows
        # read just before (by a preview) are reused only while nothing has been written.
        decision = decide(conn, session, lifecycle, max_events, leased, now)
        sessions.touch_session(conn, session_id, now)
        return decision

    def commit(self, reservation_id: str) -> DeliveryClaim | None:
        """Apply a live reservation's stored plan (no re-deciding); None if unknown or expired."""
        now = self.clock.now_ms()
        with self._write() as conn:
            reservation, live = self._apply_if_live(conn, reservation_id, now)
        if reservation is None:
            return None
        self.request_refresh(reservation.session_id)
        return reservation.decision.claim if live else None

    def _apply_if_live(self, conn: Any, reservation_id: str, now: int) -> tuple[Lease | None, bool]:
        """Remove a reservation and apply its plan if it is still live: (it, applied)."""
        reservation = self.reservations.remove(reservation_id)
        live = reservation is not None and reservation.expires_at_ms > now
        if reservation is not None and live:
            apply(conn, reservation.decision, now)
        return reservation, live

    def release(self, reservation_id: str) -> None:
        """Drop a reservation; its rows are pending again."""
        with self.db.read():
            reservation = self.reservations.remove(reservation_id)
            self.pushes.forget(reservation_id)
        if reservation is not None:
            self.request_refresh(reservation.session_id)

    def release_undelivered(self, reply: Any) -> None:
        """Drop the reservation a reserve reply carried when that reply never reached
        its hook (the hook timed out and left while the daemon was stalled): otherwise
        the lease would withhold its events for the whole TTL."""
        if not isinstance(reply, dict):
            return
        held = reply.get("reservation", reply)
        reservation_id = held.get("reservationId") if isinstance(held, dict) else None
        if isinstance(reservation_id, str):
            self.release(reservation_id)

    # ------------------------------------------------------------------ channel proof

    def channel_sent(self, delivery_id: str) -> bool:
        """The channel sent this push; it now waits for proof. False if unknown."""
        return self.pushes.mark_sent(delivery_id) is not None

    def confirm_pushes(self, session_id: str, delivery_ids: Sequence[str]) -> list[str]:
        """The host showed these pushes (their tags reached a UserPromptSubmit).

        A live lease is committed as planned; a lapsed or voided one claims whichever
        of its rows nobody claimed since, because they were shown all the same. The
        session's channel counts as confirmed from now on. Returns the ids applied;
        ids of other sessions or unknown ones are ignored.
        """
        now = self.clock.now_ms()
        confirmed: list[str] = []
        with self._write() as conn:
            for delivery_id in dict.fromkeys(delivery_ids):
                push = self.pushes.get(delivery_id)
                if push is None or push.session_id != session_id:
                    continue
                if not self._apply_if_live(conn, delivery_id, now)[1]:
                    rows = [
                        row
                        for row in states.unread_rows(conn, session_id)
                        if row.id in push.event_ids and row.first_notified_at is None
                    ]
                    if rows:
                        states.mark_claimed(conn, session_id, rows, "turn-interruptible", now)
                self.pushes.forget_sent(delivery_id)
                confirmed.append(delivery_id)
            if confirmed:
                self.pushes.confirm(session_id)
        if confirmed:
            self.request_refresh(session_id)
        return confirmed

    def _confirm_acked_pushes(
        self, conn: Any, session_id: str, event_ids: set[str], now: int
    ) -> None:
        """Commit the live pushes whose events an explicit ack names (inside its txn)."""
        for push in self.pushes.of_session(session_id):
            if not push.sent or not push.event_ids & event_ids:
                continue
            if not self._apply_if_live(conn, push.delivery_id, now)[1]:
                # Lapsed: the hook may have shown these rows since, so the ack proves
                # nothing about the channel.
                continue
            self.pushes.forget_sent(push.delivery_id)
            self.pushes.confirm(session_id)

    def channel_status(self, session_id: str) -> dict[str, Any]:
        return dict(self.pushes.standing(session_id))

    # ------------------------------------------------------------------ read-only

    def _view(self, session_id: str) -> tuple[SessionView, bool]:
        """(session view, is lead) under the read lock; ``SessionNotFound`` if unknown."""
        with self.db.read() as conn:
            session = sessions.get_session(conn, session_id)
            leased = self.reservations.leased(session_id)
            view = SessionView.read(conn, session_id, leased, self.clock.now_ms())
        return view, session["role"] == "lead"

    def preview(self, session_id: str, limit: int | None = None) -> list[EventSummary]:
        """The summaries a high claim would surface now, oldest first; nothing is claimed.

        Uncapped by default (docs/compatibility.md); ``limit`` keeps the first ones,
        which is all a transport sizing a 4,000-character delivery can use.
        """
        with self.db.read() as conn:
            session = sessions.get_session(conn, session_id)
            if session["role"] != "lead":
                return []
            leased = self.reservations.leased(session_id)
            view = SessionView.read(conn, session_id, leased, self.clock.now_ms())
            batch = high_batch(conn, view, None if limit is None else max(1, limit))
        return [] if batch is None else batch.summaries()

    def preview_reminder(self, session_id: str) -> str | None:
        """The reminder a settled-high claim would fold in now, else None."""
        view, lead = self._view(session_id)
        if lead and view.settled_high() and view.reminder_due("normal"):
            return REMINDER
        return None

    def diagnose(
        self, session_id: str, lifecycle: str, socket_path: str | None = None
    ) -> dict[str, Any]:
        """``hook.diagnose``; with the hook's ``socket_path``, sized for ``deferred-by-cap``."""
        checked = check_lifecycle(lifecycle)
        if socket_path is None or checked != "turn-interruptible":
            view, _lead = self._view(session_id)
            return diagnose(view, checked)
        with self.db.read() as conn:
            sessions.get_session(conn, session_id)
            leased = self.reservations.leased(session_id)
            view = SessionView.read(conn, session_id, leased, self.clock.now_ms())
            deferred = cap_hold(conn, view, socket_path=socket_path)
        return diagnose(view, checked, deferred=deferred)

    def hook_state(self, session_id: str) -> dict[str, Any]:
        """What the session's hook-state file holds (computed now, not read from disk)."""
        view, _lead = self._view(session_id)
        return hook_state(view)

    # ------------------------------------------------------------------ hook-state files

    def refresh_hook_state(self, session_id: str, *, only_if_changed: bool = False) -> None:
        """Rewrite one session's hook-state file; failures are logged, never raised.

        Computed and written under the database lock, so files are written in the
        same order as the state they describe.
        """
        try:
            with self.db.read() as conn:
                session = sessions.get_session(conn, session_id)
                path = session["hook_state_path"]
                if not path:
                    return
                leased = self.reservations.leased(session_id)
                view = SessionView.read(conn, session_id, leased, self.clock.now_ms())
                state = hook_state(view)
                # The end-of-tick refresh of every session rewrites a file only when
                # what it says changed (or it is gone), not every second for a new
                # timestamp; state changes (claims, acks, ...) always rewrite it.
                comparable = {key: value for key, value in state.items() if key != "updatedAt"}
                unchanged = self._hook_state_written.get(
                    str(path)
                ) == comparable and os.path.exists(str(path))
                if self.project_folder is not None and not os.path.isdir(self.project_folder):
                    return
                if not (only_if_changed and unchanged):
                    write_private_json(str(path), state)
                    self._hook_state_written[str(path)] = comparable
        except Exception:
            log.warning("could not refresh the hook state of session %s", session_id, exc_info=True)

    def refresh_all(self, workspace: str | None) -> None:
        """Refresh every session of ``workspace`` and every global one (after each tick)."""
        try:
            with self.db.read() as conn:
                ids = [str(row["id"]) for row in sessions.sessions_for_workspace(conn, workspace)]
        except Exception:
            log.warning("could not list the sessions of %s", workspace, exc_info=True)
            return
        for session_id in ids:
            self.refresh_hook_state(session_id, only_if_changed=True)

"""In-memory delivery reservations (leases) for fallible transports.

A reservation holds a decided claim and its candidate rows for a short time without
writing anything: the rows stay unread and unclaimed, but no other claim may surface
them. Commit applies the stored plan; release, expiry or a daemon restart drop the
lease and the rows are pending again. Nothing here is persisted, by design.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from agentmonitors.clock import Clock
from agentmonitors.delivery.decide import Decision
from agentmonitors.delivery.records import RESERVATION_TTL_MS
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.fastpath.ulid import new_id


@dataclass(frozen=True)
class Lease:
    """A decided claim held for a transport until it commits, is released or expires
    (on the wire, ``delivery/wire.Reservation`` is its id and claim)."""

    decision: Decision
    expires_at_ms: int

    @property
    def session_id(self) -> str:
        return self.decision.session_id


class ReservationRegistry:
    """Live reservations by id; expired ones are pruned whenever the registry is read."""

    def __init__(self, clock: Clock, ttl_ms: int = RESERVATION_TTL_MS) -> None:
        self.clock = clock
        self.ttl_ms = ttl_ms
        self._lock = threading.Lock()
        self._items: dict[str, Lease] = {}

    def add(self, decision: Decision) -> str:
        now = self.clock.now_ms()
        reservation_id = new_id(now)
        with self._lock:
            self._items[reservation_id] = Lease(decision, now + self.ttl_ms)
        return reservation_id

    def get(self, reservation_id: str) -> Lease | None:
        """A reservation, live or expired, left in place."""
        with self._lock:
            return self._items.get(reservation_id)

    def remove(self, reservation_id: str) -> Lease | None:
        """Remove a reservation, live or expired."""
        with self._lock:
            return self._items.pop(reservation_id, None)

    def narrow_seen(self, reservation_id: str, shown_ids: Sequence[str]) -> None:
        """Count only ``shown_ids`` as seen when the reservation commits: its text showed
        no more (see ``Decision.seen_only``). Unknown ids and reservations are ignored."""
        with self._lock:
            item = self._items.get(reservation_id)
            if item is not None:
                narrowed = item.decision.seen_only(shown_ids)
                self._items[reservation_id] = Lease(narrowed, item.expires_at_ms)

    def clear(self) -> None:
        """Drop every reservation (their rows belonged to a store that is gone)."""
        with self._lock:
            self._items.clear()

    def next_expiry(self, session_id: str) -> int | None:
        """When the session's earliest live reservation lapses (its rows pending again)."""
        now = self.clock.now_ms()
        with self._lock:
            found = [
                item.expires_at_ms
                for item in self._items.values()
                if item.session_id == session_id and item.expires_at_ms > now
            ]
        return min(found) if found else None

    def leased(self, session_id: str) -> frozenset[str]:
        """Event ids held by the session's live reservations."""
        now = self.clock.now_ms()
        held: set[str] = set()
        with self._lock:
            for key, lease in list(self._items.items()):
                item = lease
                if lease.expires_at_ms > now + self.ttl_ms:
                    # The wall clock was set back since the lease was made: it runs out
                    # within its TTL from now, not the jump later.
                    item = self._items[key] = Lease(lease.decision, now + self.ttl_ms)
                if item.expires_at_ms <= now:
                    del self._items[key]
                elif item.session_id == session_id:
                    held.update(row.id for row in item.decision.candidates)
        return frozenset(held)

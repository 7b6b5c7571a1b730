"""``delivery.wait``: the daemon answers a follower when its session may have news.

A follower (``events follow``, docs/architecture.md, "Live updates") used to look
at the store every few milliseconds to learn that something changed. Instead it holds
one request open here, and the daemon answers it when that session's delivery state
may have changed, so an idle follower sleeps in one ``recv`` and a change reaches its
line as soon as the daemon stored it:

- the session's version moved: a delivery method changed it (a claim, a commit, a
  release, an ack, session start or end) or a tick stored events (they are projected
  into every session);
- a moment that time alone makes deliverable came: the end of a high event's settle
  window, or a lease of another transport lapsing;
- the session is no longer active, the daemon is stopping, or the hold the follower
  asked for is over (it writes its heartbeat and reads the enable file then).

A hold that ends with nothing new keeps the session active itself (``kept``), as the
reserve a follower made after every hold did: an idle follower then costs the daemon
one request per heartbeat, not two, and a write a minute instead of one per heartbeat.

Nothing here polls: each wait sleeps until one of those, and every tick re-judges the
waits against the daemon's clock (a test clock moves only then).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.server import Method, params
from agentmonitors.delivery.decide import SessionView
from agentmonitors.delivery.records import HIGH_URGENCY_SETTLE_MS
from agentmonitors.delivery.sessions import get_session

if TYPE_CHECKING:
    from agentmonitors.clock import Clock
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["MAX_HOLD_MS", "LiveWaits", "next_due"]

MAX_HOLD_MS = 60_000
"""The longest a follower's request is held; it asks for less (its heartbeat period)."""

KEEP_ACTIVE_EVERY_MS = 60_000
"""How stale a session's last activity may grow before a quiet hold refreshes it: far
inside the dormancy window (``delivery/dormancy.py``), and one write a minute at most."""


def next_due(delivery: DeliveryService, session_id: str, now_ms: int) -> tuple[bool, int | None]:
    """Whether the session is active, and the next moment after ``now_ms`` at which time
    alone may make something deliverable to it: a high event's settle window ending,
    a lease lapsing. Raises ``SessionNotFound`` for an unknown session."""
    leased = delivery.reservations.leased(session_id)
    with delivery.db.read() as conn:
        if get_session(conn, session_id)["status"] != "active":
            return False, None
        view = SessionView.read(conn, session_id, leased, now_ms)
        moments = [
            row.event.created_at * 1000 + HIGH_URGENCY_SETTLE_MS for row in view.claimable("high")
        ]
    lapse = delivery.reservations.next_expiry(session_id)
    if lapse is not None:
        moments.append(lapse)
    later = [moment for moment in moments if moment > now_ms]
    return True, min(later) if later else None


class LiveWaits:
    """Session versions and the requests waiting on them, on the daemon's loop."""

    def __init__(self, delivery: DeliveryService, clock: Clock) -> None:
        self.delivery = delivery
        self.clock = clock
        self._seq = 0
        self._all = 0
        self._sessions: dict[str, int] = {}
        self._waiters: set[asyncio.Event] = set()
        self._closing = False

    def version(self, session_id: str) -> int:
        return max(self._all, self._sessions.get(session_id, 0))

    def changed(self, session_id: str | None = None) -> None:
        """One session's state changed (None: every session's, as a tick's events)."""
        self._seq += 1
        if session_id is None:
            self._all = self._seq
        else:
            self._sessions[session_id] = self._seq
        self.poke()

    def poke(self) -> None:
        """Have every wait judge itself again (after a tick the clock may have moved)."""
        for waiter in self._waiters:
            waiter.set()

    def close(self) -> None:
        """Answer every wait now: the daemon is stopping."""
        self._closing = True
        self.poke()

    def waiting(self) -> int:
        return len(self._waiters)

    async def wait(self, request: dict[str, Any]) -> dict[str, Any]:
        session_id: str = request["sessionId"]
        since = request.get("since")
        hold_s = min(request.get("holdMs", MAX_HOLD_MS), MAX_HOLD_MS) / 1000
        loop = asyncio.get_running_loop()
        end = loop.time() + hold_s
        target: int | None = None
        poke = asyncio.Event()
        self._waiters.add(poke)
        try:
            while True:
                version = self.version(session_id)
                if self._closing or version != since:
                    return {"version": version, "why": "changed"}
                now = self.clock.now_ms()
                if target is not None and now >= target:
                    return {"version": version, "why": "due"}
                try:
                    active, due = next_due(self.delivery, session_id, now)
                except Exception:  # an unknown session, a store gone: the reserve says which
                    return {"version": version, "why": "changed"}
                if not active:
                    return {"version": version, "why": "changed"}
                if due is not None:
                    target = due if target is None else min(target, due)
                timeout = end - loop.time()
                if timeout <= 0:
                    return {"version": version, "why": "hold", "kept": self._keep(session_id)}
                if target is not None:
                    timeout = min(timeout, max(0.0, (target - now) / 1000))
                poke.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(poke.wait(), timeout)
        finally:
            self._waiters.discard(poke)

    def _keep(self, session_id: str) -> bool:
        """Keep the session active as a delivery request would; False if it failed
        (the follower then asks with a reserve, which says what is wrong)."""
        now = self.clock.now_ms()
        try:
            with self.delivery.db.read() as conn:
                last = get_session(conn, session_id)["last_active_at"]
            if last is None or now - int(last) * 1000 >= KEEP_ACTIVE_EVERY_MS:
                self.delivery.touch_session(session_id)
        except Exception:
            return False
        return True

    def method(self) -> Method:
        return Method(
            self.wait,
            params(sessionId=(str, True), since=(int, False), holdMs=(int, False)),
        )

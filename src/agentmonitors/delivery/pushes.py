"""Channel pushes awaiting proof that the host showed them.

A channel push is a reservation whose notification went out. Claude Code drops channel
notifications silently wherever channels are off, and nothing tells the server, so a
push is committed only on proof: the channel turn's UserPromptSubmit (whose prompt is
the rendered ``<channel ... delivery_id="...">`` tag) or an ``agentmon_ack`` naming its
events. Until then the lease holds the rows; when it lapses they are pending again.

Per session this module remembers whether any push was ever confirmed. A session with
an unconfirmed push gets no further pushes until one is confirmed, and the hook path
voids its leases, so a host that never shows channels is served by the hooks alone:
an unconfirmed push can cause a later duplicate, never a loss. Everything here lives
in the daemon's memory, like the leases themselves.
"""

from __future__ import annotations

import threading

from agentmonitors.clock import Clock
from agentmonitors.fastpath.lean_dataclass import dataclass, field

# How long a push is remembered for a late proof (a channel turn can start long after
# the lease lapsed, for instance when the host queued it behind a running turn).
PUSH_MEMORY_MS = 3_600_000
MAX_REMEMBERED_PUSHES = 2_000


@dataclass
class Push:
    delivery_id: str
    session_id: str
    event_ids: frozenset[str]
    created_at_ms: int
    sent: bool = False


@dataclass
class _SessionChannel:
    confirmed: bool = False
    # A push went out and nothing has proved it was shown yet.
    unconfirmed_sent: bool = False
    deliveries: list[str] = field(default_factory=list)


class PushLedger:
    """Pushes by delivery id (= reservation id) and each session's channel standing."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._pushes: dict[str, Push] = {}
        self._sessions: dict[str, _SessionChannel] = {}

    def _prune(self, now_ms: int) -> None:
        horizon = now_ms - PUSH_MEMORY_MS
        stale = {key for key, push in self._pushes.items() if push.created_at_ms < horizon}
        overflow = len(self._pushes) - len(stale) - MAX_REMEMBERED_PUSHES
        if overflow > 0:  # oldest first: the dict keeps insertion order
            stale.update([key for key in self._pushes if key not in stale][:overflow])
        for key in stale:
            self._drop(key)

    def may_push(self, session_id: str) -> bool:
        """A session gets a push unless an earlier one is still unconfirmed."""
        with self._lock:
            standing = self._sessions.get(session_id)
            return standing is None or standing.confirmed or not standing.unconfirmed_sent

    def confirmed(self, session_id: str) -> bool:
        with self._lock:
            standing = self._sessions.get(session_id)
            return standing is not None and standing.confirmed

    def record(self, delivery_id: str, session_id: str, event_ids: frozenset[str]) -> None:
        now = self.clock.now_ms()
        with self._lock:
            self._prune(now)
            self._pushes[delivery_id] = Push(delivery_id, session_id, event_ids, now)
            self._sessions.setdefault(session_id, _SessionChannel()).deliveries.append(delivery_id)

    def mark_sent(self, delivery_id: str) -> Push | None:
        with self._lock:
            push = self._pushes.get(delivery_id)
            if push is None:
                return None
            push.sent = True
            standing = self._sessions.setdefault(push.session_id, _SessionChannel())
            if not standing.confirmed:
                standing.unconfirmed_sent = True
            return push

    def forget(self, delivery_id: str) -> None:
        """A push that never went out (released before or instead of sending)."""
        with self._lock:
            push = self._pushes.get(delivery_id)
            if push is not None and not push.sent:
                self._drop(delivery_id)

    def forget_sent(self, delivery_id: str) -> None:
        """A push that has been proved (its proof is not needed twice)."""
        with self._lock:
            self._drop(delivery_id)

    def _drop(self, delivery_id: str) -> None:
        push = self._pushes.pop(delivery_id, None)
        standing = None if push is None else self._sessions.get(push.session_id)
        if standing is not None and delivery_id in standing.deliveries:
            standing.deliveries.remove(delivery_id)

    def get(self, delivery_id: str) -> Push | None:
        with self._lock:
            return self._pushes.get(delivery_id)

    def of_session(self, session_id: str) -> list[Push]:
        with self._lock:
            standing = self._sessions.get(session_id)
            if standing is None:
                return []
            return [self._pushes[key] for key in standing.deliveries if key in self._pushes]

    def confirm(self, session_id: str) -> None:
        """The host has shown one of this session's pushes: channels work there."""
        with self._lock:
            standing = self._sessions.setdefault(session_id, _SessionChannel())
            standing.confirmed = True
            standing.unconfirmed_sent = False

    def standing(self, session_id: str) -> dict[str, object]:
        """What ``channel.status`` reports for a session."""
        with self._lock:
            standing = self._sessions.get(session_id) or _SessionChannel()
            return {
                "confirmed": standing.confirmed,
                "awaitingProof": standing.unconfirmed_sent,
                "pushes": len([key for key in standing.deliveries if key in self._pushes]),
            }

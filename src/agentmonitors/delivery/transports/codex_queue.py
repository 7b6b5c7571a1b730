"""The codex-queue transport: ``codex queue`` wakes an idle interactive Codex thread.

See docs/architecture.md, "Transports". Codex 0.169's TUI runs its thread on a managed
app-server daemon; ``codex queue --thread <id> --message <text>`` makes an idle thread
take a turn a few tenths of a second later, the text arriving as a plain user item. The
agentmonitors daemon runs it (``daemon/codex_wake.py``) for an active Codex lead whose
thread is idle and held by a TUI. It claims what the next prompt would surface
(``turn-interruptible``: settled high events, normal ones as their reminder), sized and
rendered as the hook is, and commits only on proof (as a channel push does,
``delivery/pushes.py``): the woken turn's UserPromptSubmit carries our tag back
(``delivery/codex_queue_text.py``), which commits it, so that hook never delivers the
same events again; a queue that fails or is never shown lapses and the hooks deliver.
Its heartbeat, written after each wake, is what ``doctor`` shows; none is expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors.delivery import sessions
from agentmonitors.delivery.codex_queue_text import queued_message
from agentmonitors.delivery.decide import SessionView
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT
from agentmonitors.delivery.transports.health import (
    Expected,
    Lead,
    TransportHealth,
    binding_problems,
    freshness,
)
from agentmonitors.delivery.transports.hook import HookShaped
from agentmonitors.untrusted import clean_line

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["SERVED_ADAPTER", "TRANSPORT", "CodexQueueTransport", "wake_key"]

SERVED_ADAPTER = "codex"
"""The host whose sessions this transport wakes (the sessions' ``adapter``)."""


class CodexQueueTransport(HookShaped):
    name = "codex-queue"
    cap = MAX_ADDITIONAL_CONTEXT
    min_cap = 200
    commits_on_proof = True
    named_when_absent = False

    def serves(self, session: Mapping[str, Any]) -> bool:
        """An active lead session of the host this transport wakes."""
        return (
            session.get("adapter") == SERVED_ADAPTER
            and session.get("status") == "active"
            and session.get("role", "lead") == "lead"
        )

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``hostSessionId`` required; the reply's ``text`` is the whole queued message
        (our head line, the delivery, the tag the woken prompt carries back)."""
        rendered = reserve_rendered(
            service,
            self.required(request, "hostSessionId"),
            "turn-interruptible",
            socket_path=request["socketPath"],
            transport=self.name,
            cap=self.requested_cap(request),
        )
        reply: dict[str, Any] = dict(rendered)
        reservation, delivery_id = rendered.get("reservation"), rendered.get("deliveryId")
        if reservation is not None and delivery_id and rendered.get("text"):
            reply["text"] = queued_message(
                reservation["claim"], rendered["text"], delivery_id, _names(service, delivery_id)
            )
        return reply

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        """The wakes of this workspace's active Codex leads, freshest first. None is
        expected: a thread is woken only while idle, and the hooks deliver otherwise."""
        health = TransportHealth(self.name)
        hosts = {lead.host_session_id for lead in leads if lead.host == SERVED_ADAPTER}
        matched = [record for record in records if record.get("hostSessionId") in hosts]
        matched.sort(key=lambda record: freshness(record, expected), reverse=True)
        health.records.extend(matched)
        for record in matched:
            # A wake's record is old by nature (written only when it wakes): only where
            # and with what it ran can be wrong.
            binding_problems(health, record, expected, f"{record.get('hostSessionId')}: ")
            health.problems = [p for p in health.problems if p["code"] != "heartbeat-stale"]
        return health


def wake_key(
    service: DeliveryService, session_id: str, *, normal_wakes: bool = True
) -> tuple[str, ...]:
    """What the next prompt would surface for the session (settled high events, the
    normal reminder when due and ``normal_wakes``: the enable file's ``wake:`` lets it),
    as a key that changes when that does; () for nothing."""
    with service.db.read() as conn:
        if sessions.get_session(conn, session_id)["role"] != "lead":
            return ()
        leased = service.reservations.leased(session_id)
        view = SessionView.read(conn, session_id, leased, service.clock.now_ms())
    high = tuple(row.id for row in view.settled_high())
    if not normal_wakes or not view.reminder_due("normal"):
        return high
    return high + tuple(row.id for row in view.claimable("normal"))


def _names(service: DeliveryService, delivery_id: str) -> list[str]:
    """The monitors whose events the reservation holds (normal ones too, which a
    reminder only counts), each once, in the claim's order."""
    lease = service.reservations.get(delivery_id)
    rows = () if lease is None else lease.decision.candidates
    return list(dict.fromkeys(clean_line(row.event.monitor_id) for row in rows))


TRANSPORT = CodexQueueTransport()

"""The hook transport: ``hook deliver``'s ``additionalContext``, committed when written.

See docs/architecture.md, "Transports". The host runs ``hook deliver`` at each point of
the agent's loop (``transports/deliver.py``); the daemon sizes and renders its claim here
within 4,000 code points, and the hook commits what it printed. ``doctor`` matches its
heartbeats by host session, or by workspace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors.delivery.packing import HOOK_PACKING
from agentmonitors.delivery.render import render_hook_shown
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT
from agentmonitors.delivery.transports.base import BaseTransport, InvalidRequest
from agentmonitors.delivery.transports.health import (
    Expected,
    Lead,
    TransportHealth,
    binding_problems,
    freshness,
    same_path,
    uncovered_leads,
)

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["TRANSPORT", "HookShaped", "HookTransport"]


class HookShaped(BaseTransport):
    """A transport whose deliveries are laid out, sized and rendered as the hook's are
    (the hook itself, a ``follow`` line's claim, a ``codex queue`` message)."""

    packing = HOOK_PACKING

    def render(
        self, claim: Mapping[str, Any], socket_path: str, *, more_deferred: bool, cap: int
    ) -> tuple[str, list[str]]:
        return render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)


class HookTransport(HookShaped):
    name = "hook"
    cap = MAX_ADDITIONAL_CONTEXT
    decides_listening = True

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``hostSessionId`` and ``lifecycle`` required; ``channelDeliveryIds`` are the
        channel pushes this hook's prompt showed (confirmed before anything is sized)."""
        ids = request.get("channelDeliveryIds")
        if ids is not None and not all(isinstance(item, str) for item in ids):
            raise InvalidRequest("channelDeliveryIds must be an array of strings")
        host, lifecycle = request.get("hostSessionId"), request.get("lifecycle")
        if not isinstance(host, str) or not isinstance(lifecycle, str):
            raise InvalidRequest("the hook transport needs hostSessionId and lifecycle")
        return dict(
            reserve_rendered(
                service,
                host,
                lifecycle,
                socket_path=request["socketPath"],
                transport=self.name,
                cap=request.get("cap"),
                channel_delivery_ids=ids,
            )
        )

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        return _hook_health(records, leads, expected)


def _hook_health(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> TransportHealth:
    transport = TransportHealth(TRANSPORT.name)
    hosts = {lead.host_session_id for lead in leads}
    here = [
        record
        for record in records
        if record.get("hostSessionId") in hosts
        or same_path(record.get("workspacePath"), expected.workspace)
    ]
    # Active leads first, then the freshest: the first one is the representative.
    here.sort(
        key=lambda record: (record.get("hostSessionId") in hosts, freshness(record, expected)),
        reverse=True,
    )
    transport.records.extend(here)
    covered = set()
    for record in here:
        host = record.get("hostSessionId")
        if host in hosts:
            covered.add(host)
            binding_problems(transport, record, expected, f"{host}: ")
        elif record is here[0]:
            binding_problems(transport, record, expected, "")
    if here:
        uncovered_leads(
            transport,
            leads,
            covered,
            ": its hooks have not run `hook deliver` with this installation",
            "send a prompt in that session; if this stays, reinstall the agentmonitors"
            " plugin (its hooks run `agentmonitors hook deliver`)",
        )
    return transport


TRANSPORT = HookTransport()

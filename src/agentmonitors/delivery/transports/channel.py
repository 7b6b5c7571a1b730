"""The channel transport: an MCP notification, committed only on proof it was shown.

See docs/architecture.md, "Transports" and "The delivery protocol". ``channel serve``
(``transports/channel.py``) pushes what the daemon sized and rendered here within 20,000
code points; the push commits when a later prompt shows its tag (``delivery/pushes.py``),
so while one waits the channel is held. ``doctor`` matches its heartbeats by host
session across every workspace, so a channel bound to the wrong project shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors.delivery.heartbeats import is_stale
from agentmonitors.delivery.meta import channel_meta
from agentmonitors.delivery.packing import CHANNEL_PACKING
from agentmonitors.delivery.render import render_channel_shown
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.text import MAX_CHANNEL_CONTENT
from agentmonitors.delivery.transports.base import BaseTransport
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

__all__ = ["TRANSPORT", "ChannelTransport"]


class ChannelTransport(BaseTransport):
    name = "channel"
    cap = MAX_CHANNEL_CONTENT
    packing = CHANNEL_PACKING
    commits_on_proof = True
    holds_daemon = True
    decides_listening = True

    def render(
        self, claim: Mapping[str, Any], socket_path: str, *, more_deferred: bool, cap: int
    ) -> tuple[str, list[str]]:
        text, _meta, shown = render_channel_shown(
            claim, socket_path, more_deferred=more_deferred, cap=cap
        )
        return text, shown

    def reply_meta(self, claim: Mapping[str, Any]) -> dict[str, str] | None:
        return channel_meta(claim)

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``hostSessionId`` required; a push is what the next prompt would surface."""
        return dict(
            reserve_rendered(
                service,
                self.required(request, "hostSessionId"),
                "turn-interruptible",
                socket_path=request["socketPath"],
                transport=self.name,
                cap=request.get("cap"),
            )
        )

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        return _channel_health(records, leads, expected)


def _channel_health(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> TransportHealth:
    transport = TransportHealth(TRANSPORT.name)
    hosts = {lead.host_session_id for lead in leads}
    matched: dict[str, list[dict[str, Any]]] = {}
    unmatched: list[dict[str, Any]] = []
    for record in records:
        host = record.get("hostSessionId")
        if isinstance(host, str) and host in hosts:
            matched.setdefault(host, []).append(record)
        elif same_path(record.get("workspacePath"), expected.workspace) and not is_stale(
            record, expected.wall_ms
        ):
            unmatched.append(record)
            transport.add(
                "channel-session-unmatched",
                f"a channel for this workspace is bound to host session {host or '(none)'},"
                " which is no active lead session here",
                "start Claude Code with CLAUDE_CODE_SESSION_ID set by the host (launch it"
                " normally, not the channel server by hand) so the channel binds to the session",
            )
    for host, found in matched.items():
        transport.records.extend(found)
        for record in found:
            binding_problems(transport, record, expected, f"{host}: ")
            if not record.get("lastDeliveryAt"):
                transport.add(
                    "channel-registration-unverified",
                    f"{host}: the channel runs but has not delivered anything yet, so it is"
                    " unknown whether Claude Code shows its pushes",
                    "nothing to fix if hooks deliver; for channel pushes Claude Code must load"
                    " the channel (v2.1.80+, channelsEnabled or"
                    " --dangerously-load-development-channels)",
                )
    # The representative (first) is a lead's freshest record; strays come last.
    transport.records.sort(key=lambda record: freshness(record, expected), reverse=True)
    transport.records.extend(unmatched)
    if matched:
        uncovered_leads(
            transport,
            leads,
            matched,
            "",
            "restart that Claude Code session with the channel server of the plugin loaded,"
            " or rely on its hooks",
        )
    return transport


TRANSPORT = ChannelTransport()

"""The ``Transport`` protocol: everything the daemon and ``doctor`` ask of a transport.

See docs/architecture.md, "Transports". A transport says what it is called, how a batch
of events is sized and rendered for it, whether a delivery commits only on proof that
the host showed it, what its heartbeat means, what ``doctor`` checks for it and how
``doctor`` and ``monitor explain`` describe it. :class:`BaseTransport` gives every answer
but the name, the sizing and the doctor check a default; ``registry.register`` refuses a
transport without those. Light on purpose: the registry imports this at startup of
every command that builds the delivery service.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentmonitors.delivery.packing import Packing
    from agentmonitors.delivery.service import DeliveryService
    from agentmonitors.delivery.transports.health import Expected, Lead, TransportHealth

__all__ = ["BaseTransport", "InvalidRequest", "Transport"]


class InvalidRequest(ValueError):
    """A reserve request this transport cannot answer (answered to the caller verbatim)."""


@runtime_checkable
class Transport(Protocol):
    """One delivery transport, as the daemon, sizing and ``doctor`` see it."""

    name: str
    """The ``transport`` of its heartbeats, reservations and ``delivery.reserveRendered``."""
    cap: int
    """Code points a delivery may hold unless the request asks for less."""
    min_cap: int
    """The smallest cap a request may ask for."""
    packing: Packing | None
    """How sizing lays its blocks out (None: it cannot be sized, and is refused)."""
    commits_on_proof: bool
    """A delivery commits only when the host shows it was seen (a channel push); any
    other transport's reservation first voids a session's unconfirmed pushes."""
    holds_daemon: bool
    """A fresh heartbeat keeps the daemon from idling out while no session is open."""
    decides_listening: bool
    """Counts in ``doctor``'s "which path delivers" summary (an additive one does not)."""
    named_when_absent: bool
    """``monitor explain`` says ``no <name>`` for a session it never served (a transport
    for one host's sessions only is left out of the others' lines)."""

    def render(
        self, claim: Mapping[str, Any], socket_path: str, *, more_deferred: bool, cap: int
    ) -> tuple[str, list[str]]:
        """The text a sized claim becomes, and the ids of the events it shows."""
        ...

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Answer ``delivery.reserveRendered`` for this transport."""
        ...

    def reply_meta(self, claim: Mapping[str, Any]) -> dict[str, str] | None:
        """What a delivery that commits on proof carries beside its text (None: nothing)."""
        ...

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        """``doctor``'s row: which of its heartbeats cover which lead, and what is wrong."""
        ...

    def describe_binding(self, bound: Mapping[str, Any]) -> str:
        """Where ``doctor``'s text says a running one is bound."""
        ...


class BaseTransport:
    """Defaults for every answer but the name, the sizing and the doctor check."""

    name: str = ""
    cap: int = 0
    min_cap: int = 1
    packing: Packing | None = None
    commits_on_proof: bool = False
    holds_daemon: bool = False
    decides_listening: bool = False
    named_when_absent: bool = True

    def reply_meta(self, claim: Mapping[str, Any]) -> dict[str, str] | None:
        return None

    def describe_binding(self, bound: Mapping[str, Any]) -> str:
        return f" (bound to {bound.get('workspacePath')})" if bound else ""

    def required(self, request: Mapping[str, Any], key: str) -> str:
        """``request[key]``, a string; else the request is refused naming the key."""
        value = request.get(key)
        if not isinstance(value, str):
            raise InvalidRequest(f"the {self.name} transport needs {key}")
        return value

    def requested_cap(self, request: Mapping[str, Any]) -> int | None:
        """The ``cap`` the request asks for (None: the transport's own); one below
        ``min_cap`` is refused."""
        cap: int | None = request.get("cap")
        if cap is not None and cap < self.min_cap:
            raise InvalidRequest(f"the {self.name} transport's cap is at least {self.min_cap}")
        return cap

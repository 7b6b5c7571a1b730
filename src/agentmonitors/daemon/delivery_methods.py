"""The delivery IPC methods: ``session.*``, ``events.*``, ``hook.*``, ``channel.*`` and
``delivery.reserveRendered``.

Thin adapters over :class:`DeliveryService`, one function per method and one table
(:data:`_METHODS`): the server checks the params, these map them to the service and its
errors to :class:`RequestError` (answered verbatim). ``delivery.reserveRendered`` serves
every registered transport (``delivery/transports/``), which answers it itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentmonitors.clock import ms_from_iso
from agentmonitors.daemon.server import Method, ParamSpec, RequestError, params
from agentmonitors.delivery.events import EventQuery, page_events
from agentmonitors.delivery.records import (
    ROLES,
    URGENCIES,
    InvalidLifecycle,
    SessionNotFound,
)
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.delivery.transports.base import InvalidRequest
from agentmonitors.delivery.transports.registry import transport, transports
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER, LIFECYCLES
from agentmonitors.delivery.wire import AckResult
from agentmonitors.formats import dump_toon
from agentmonitors.store.suppressions import retract_events, retract_object, suppress_object

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
ServiceCall = Callable[[DeliveryService, dict[str, Any]], Any]

_LIFECYCLE = ParamSpec(type="str", required=True, choices=LIFECYCLES)
_MAX_EVENTS = ParamSpec(type="int", minimum=1)
_CLAIM_PARAMS = params(sessionId=(str, True), lifecycle=_LIFECYCLE, maxEvents=_MAX_EVENTS)


def _guarded(service: DeliveryService, call: ServiceCall) -> Handler:
    """An async handler whose domain errors become ``RequestError``."""

    async def run(request: dict[str, Any]) -> Any:
        try:
            return call(service, request)
        except (SessionNotFound, InvalidLifecycle, InvalidRequest) as error:
            raise RequestError(str(error)) from None

    return run


def _since_ms(value: Any) -> int | None:
    """``since`` as an ISO-8601 timestamp, or epoch milliseconds."""
    if value is None:
        return None
    if isinstance(value, str):
        parsed = ms_from_iso(value)
        if parsed is not None:
            return parsed
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    raise RequestError("Invalid params for events.list: since must be an ISO-8601 timestamp")


def _scope(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not all(isinstance(item, str) for item in value.values()):
        raise RequestError("Invalid params for events.list: scope values must be strings")
    return dict(value)


def event_query(request: dict[str, Any]) -> EventQuery:
    return EventQuery(
        session_id=request.get("sessionId"),
        monitor_id=request.get("monitorId"),
        urgency=request.get("urgency"),
        tags=tuple(request.get("tags", ())),
        scope=_scope(request.get("scope")),
        object_key=request.get("objectKey"),
        unread_only=bool(request.get("unreadOnly", False)),
        since_baseline=bool(request.get("sinceBaseline", False)),
        since_ms=_since_ms(request.get("since")),
        cwd=request.get("cwd"),
    )


def ack_reply(result: AckResult) -> dict[str, Any]:
    """What ``events.ack`` answers, from the daemon or from the stored state alike.

    The compatible answer is ``{ok: true}`` alone; the rest is extra: the counts say what
    happened, and the unknown ids let the CLI tell a mistyped id from success.
    """
    reply: dict[str, Any] = {
        "ok": True,
        "acknowledged": result["acknowledged"],
        "heldByDelivery": result["heldByDelivery"],
    }
    if result["unknownEventIds"]:
        reply["unknownEventIds"] = result["unknownEventIds"]
    return reply


def _session_open(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.open_session(
        request["hostSessionId"],
        adapter=request.get("adapter") or CLAUDE_ADAPTER,
        agent_identity=request.get("agentIdentity"),
        hook_state_path=request.get("hookStatePath"),
        workspace_path=request.get("workspacePath"),
        role=request.get("role"),
    )


def _session_close(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.close_session(request["sessionId"])


def _session_list(service: DeliveryService, _request: dict[str, Any]) -> Any:
    return service.list_sessions()


def _events_ack(service: DeliveryService, request: dict[str, Any]) -> Any:
    return ack_reply(service.ack_counted(request["sessionId"], request.get("eventIds")))


def _events_list(service: DeliveryService, request: dict[str, Any]) -> Any:
    query = event_query(request)
    limit = request.get("limit")
    render = request.get("render")
    if limit is None:
        listed = service.list_events(query)
        if render is None:
            return listed
        records, total = listed, len(listed)
    else:
        # Additive: with a limit the reply says how many matched in all, so a listing
        # can say what it left out without the whole backlog crossing the socket.
        with service.db.read() as conn:
            page = page_events(conn, query, limit)
        if render is None:
            return {"events": page.records, "total": page.total}
        records, total = page.records, page.total
    # Rendered here, where the encoder is loaded once for the daemon's life: the
    # CLI an agent runs after every reminder then never imports it.
    return {"rendered": dump_toon(records), "shown": len(records), "total": total}


def _hook_claim(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.claim(request["sessionId"], request["lifecycle"], request.get("maxEvents"))


def _hook_reserve(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.reserve(request["sessionId"], request["lifecycle"], request.get("maxEvents"))


def _hook_commit(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.commit(request["reservationId"])


def _hook_release(service: DeliveryService, request: dict[str, Any]) -> Any:
    service.release(request["reservationId"])
    return {"ok": True}


def _hook_preview(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.preview(request["sessionId"], request.get("limit"))


def _hook_preview_reminder(service: DeliveryService, request: dict[str, Any]) -> Any:
    return {"reminder": service.preview_reminder(request["sessionId"])}


def _hook_diagnose(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.diagnose(request["sessionId"], request["lifecycle"], request.get("socketPath"))


def _reserve_rendered(service: DeliveryService, request: dict[str, Any]) -> Any:
    """The named transport sizes, reserves and renders its own next delivery."""
    return transport(request["transport"]).reserve_rendered(service, request)


def _channel_sent(service: DeliveryService, request: dict[str, Any]) -> Any:
    return {"ok": service.channel_sent(request["deliveryId"])}


def _channel_status(service: DeliveryService, request: dict[str, Any]) -> Any:
    return service.channel_status(request["sessionId"])


def _give_back_undelivered(service: DeliveryService) -> Callable[[Any], None]:
    """Release the lease of a reply that never reached its transport, unless it waits
    for proof (it carries a ``deliveryId``): proof or the lease's expiry settles that."""

    def give_back(reply: Any) -> None:
        if isinstance(reply, dict) and "deliveryId" in reply:
            return
        service.release_undelivered(reply)

    return give_back


_SESSION_ONLY = params(sessionId=(str, True))
_RESERVATION = params(reservationId=(str, True))


def _reserve_rendered_params() -> Mapping[str, ParamSpec]:
    # Every registered transport, when the table is built: the ones a test registers too.
    names = tuple(kind.name for kind in transports())
    return params(
        transport=ParamSpec(type="str", required=True, choices=names),
        hostSessionId=(str, False),
        sessionId=(str, False),
        lifecycle=ParamSpec(type="str", choices=LIFECYCLES),
        socketPath=(str, True),
        cap=ParamSpec(type="int", minimum=1),
        channelDeliveryIds=(list, False),
    )


_EVENTS_LIST_PARAMS = params(
    limit=ParamSpec(type="int", minimum=1),
    sessionId=(str, False),
    monitorId=(str, False),
    urgency=ParamSpec(type="str", choices=URGENCIES),
    tags=(list, False),
    scope=(dict, False),
    cwd=(str, False),
    objectKey=(str, False),
    unreadOnly=(bool, False),
    sinceBaseline=(bool, False),
    since=(object, False),
    render=ParamSpec(type="str", choices=("toon",)),
)
_SESSION_OPEN_PARAMS = params(
    adapter=(str, False),
    hostSessionId=(str, True),
    agentIdentity=(str, False),
    hookStatePath=(str, False),
    workspacePath=(str, False),
    role=ParamSpec(type="str", choices=ROLES),
)

_METHODS: tuple[tuple[str, ServiceCall, Mapping[str, ParamSpec], bool], ...] = (
    # (name, call, params, whether an undelivered reply gives its lease back)
    ("session.open", _session_open, _SESSION_OPEN_PARAMS, False),
    ("session.close", _session_close, _SESSION_ONLY, False),
    ("session.list", _session_list, params(), False),
    ("events.list", _events_list, _EVENTS_LIST_PARAMS, False),
    ("events.ack", _events_ack, params(sessionId=(str, True), eventIds=(list, False)), False),
    ("hook.claim", _hook_claim, _CLAIM_PARAMS, False),
    ("hook.reserve", _hook_reserve, _CLAIM_PARAMS, True),
    ("hook.commit", _hook_commit, _RESERVATION, False),
    ("hook.release", _hook_release, _RESERVATION, False),
    (
        "hook.preview",
        _hook_preview,
        params(sessionId=(str, True), limit=ParamSpec("int", minimum=1)),
        False,
    ),
    ("hook.previewReminder", _hook_preview_reminder, _SESSION_ONLY, False),
    (
        "hook.diagnose",
        _hook_diagnose,
        params(sessionId=(str, True), lifecycle=_LIFECYCLE, socketPath=(str, False)),
        False,
    ),
    # A channel push is reserved, sent, and committed only on proof that the host
    # showed it (see delivery/pushes.py).
    ("channel.sent", _channel_sent, params(deliveryId=(str, True)), False),
    ("channel.status", _channel_status, _SESSION_ONLY, False),
)


def delivery_methods(service: DeliveryService) -> dict[str, Method]:
    """The method table entries this service answers."""
    give_back = service.release_undelivered
    table = {
        name: Method(_guarded(service, call), spec, undelivered=give_back if gives else None)
        for name, call, spec, gives in _METHODS
    }
    table["delivery.reserveRendered"] = Method(
        _guarded(service, _reserve_rendered),
        _reserve_rendered_params(),
        undelivered=_give_back_undelivered(service),
    )
    # verify's cleanup in a workspace daemon: scratch objects only (store/suppressions.py).
    table["events.suppressObject"] = Method(
        _object_call(service, _suppress_object),
        params(
            monitorId=(str, True),
            objectKey=(str, True),
            workspacePath=(str, False),
            ttlMs=ParamSpec(type="int", required=True, minimum=1),
        ),
    )
    table["events.retractObject"] = Method(
        _object_call(service, _retract_object),
        params(
            monitorId=(str, True),
            objectKey=(str, False),
            eventIds=(list, False),
            workspacePath=(str, False),
        ),
    )
    return table


def _object_call(
    service: DeliveryService, handler: Callable[[DeliveryService, dict[str, Any]], Any]
) -> Handler:
    async def run(request: dict[str, Any]) -> Any:
        try:
            return handler(service, request)
        except ValueError as error:
            raise RequestError(str(error)) from None

    return run


def _suppress_object(service: DeliveryService, request: dict[str, Any]) -> Any:
    return suppress_object(
        service.db,
        request["monitorId"],
        request["objectKey"],
        request.get("workspacePath"),
        ttl_ms=request["ttlMs"],
        now_ms=service.clock.now_ms(),
    )


def _retract_object(service: DeliveryService, request: dict[str, Any]) -> Any:
    """By ``objectKey`` (a scratch object) or by exact ``eventIds``, never both."""
    key, ids = request.get("objectKey"), request.get("eventIds")
    if (key is None) == (ids is None):
        raise ValueError("events.retractObject takes objectKey or eventIds")
    if ids is not None:
        if not all(isinstance(item, str) for item in ids):
            raise ValueError("eventIds must be an array of strings")
        return {"ok": True, "retracted": retract_events(service.db, request["monitorId"], ids)}
    retracted = retract_object(
        service.db, request["monitorId"], str(key), request.get("workspacePath")
    )
    return {"ok": True, "retracted": retracted}

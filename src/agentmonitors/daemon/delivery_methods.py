"""The delivery IPC methods: ``session.*``, ``events.list``/``ack`` and ``hook.*``.

Thin adapters over :class:`DeliveryService`: the server checks the params, these map
them to the service and its errors to :class:`RequestError` (answered verbatim).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
from agentmonitors.delivery.rendered import reserve_rendered
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER, LIFECYCLES
from agentmonitors.delivery.wire import AckResult
from agentmonitors.formats import dump_toon

Handler = Callable[[dict[str, Any]], Awaitable[Any]]

_LIFECYCLE = ParamSpec(type="str", required=True, choices=LIFECYCLES)
_MAX_EVENTS = ParamSpec(type="int", minimum=1)
_CLAIM_PARAMS = params(sessionId=(str, True), lifecycle=_LIFECYCLE, maxEvents=_MAX_EVENTS)


def _guarded(handler: Callable[[dict[str, Any]], Any]) -> Handler:
    """An async handler whose domain errors become ``RequestError``."""

    async def run(request: dict[str, Any]) -> Any:
        try:
            return handler(request)
        except (SessionNotFound, InvalidLifecycle) as error:
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


def delivery_methods(service: DeliveryService) -> dict[str, Method]:
    """The method table entries this service answers."""

    def session_open(request: dict[str, Any]) -> Any:
        return service.open_session(
            request["hostSessionId"],
            adapter=request.get("adapter") or CLAUDE_ADAPTER,
            agent_identity=request.get("agentIdentity"),
            hook_state_path=request.get("hookStatePath"),
            workspace_path=request.get("workspacePath"),
            role=request.get("role"),
        )

    def events_ack(request: dict[str, Any]) -> Any:
        return ack_reply(service.ack_counted(request["sessionId"], request.get("eventIds")))

    def events_list(request: dict[str, Any]) -> Any:
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

    def hook_release(request: dict[str, Any]) -> Any:
        service.release(request["reservationId"])
        return {"ok": True}

    def hook_preview_reminder(request: dict[str, Any]) -> Any:
        return {"reminder": service.preview_reminder(request["sessionId"])}

    def hook_reserve_rendered(request: dict[str, Any]) -> Any:
        ids = request.get("channelDeliveryIds")
        if ids is not None and not all(isinstance(item, str) for item in ids):
            raise RequestError("channelDeliveryIds must be an array of strings")
        return reserve_rendered(
            service,
            request["hostSessionId"],
            request["lifecycle"],
            socket_path=request["socketPath"],
            packer=request.get("packer", "hook"),
            cap=request.get("cap"),
            channel_delivery_ids=ids,
        )

    def channel_reserve_rendered(request: dict[str, Any]) -> Any:
        return reserve_rendered(
            service,
            request["hostSessionId"],
            "turn-interruptible",
            socket_path=request["socketPath"],
            packer="channel",
            cap=request.get("cap"),
        )

    def follow_reserve_rendered(request: dict[str, Any]) -> Any:
        from agentmonitors.delivery.follow_line import reserve_follow

        return reserve_follow(
            service, request["sessionId"], socket_path=request["socketPath"], cap=request.get("cap")
        )

    def channel_sent(request: dict[str, Any]) -> Any:
        return {"ok": service.channel_sent(request["deliveryId"])}

    session_only = params(sessionId=(str, True))
    reservation = params(reservationId=(str, True))
    return {
        "hook.reserveRendered": Method(
            _guarded(hook_reserve_rendered),
            params(
                hostSessionId=(str, True),
                lifecycle=_LIFECYCLE,
                socketPath=(str, True),
                packer=ParamSpec(type="str", choices=("hook", "channel")),
                cap=ParamSpec(type="int", minimum=1),
                channelDeliveryIds=(list, False),
            ),
            undelivered=service.release_undelivered,
        ),
        # The channel transport (additive): a push is reserved, sent, and committed
        # only on proof that the host showed it (see delivery/pushes.py).
        "channel.reserveRendered": Method(
            _guarded(channel_reserve_rendered),
            params(
                hostSessionId=(str, True),
                socketPath=(str, True),
                cap=ParamSpec(type="int", minimum=1),
            ),
        ),
        # ``events follow`` (additive): one line per delivery; released if the
        # follower is gone before the reply reaches it.
        "follow.reserveRendered": Method(
            _guarded(follow_reserve_rendered),
            params(
                sessionId=(str, True),
                socketPath=(str, True),
                cap=ParamSpec(type="int", minimum=80),
            ),
            undelivered=service.release_undelivered,
        ),
        "channel.sent": Method(_guarded(channel_sent), params(deliveryId=(str, True))),
        "channel.status": Method(
            _guarded(lambda request: service.channel_status(request["sessionId"])),
            session_only,
        ),
        "session.open": Method(
            _guarded(session_open),
            params(
                adapter=(str, False),
                hostSessionId=(str, True),
                agentIdentity=(str, False),
                hookStatePath=(str, False),
                workspacePath=(str, False),
                role=ParamSpec(type="str", choices=ROLES),
            ),
        ),
        "session.close": Method(
            _guarded(lambda request: service.close_session(request["sessionId"])), session_only
        ),
        "session.list": Method(_guarded(lambda _request: service.list_sessions()), params()),
        "events.list": Method(
            _guarded(events_list),
            params(
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
            ),
        ),
        "events.ack": Method(
            _guarded(events_ack), params(sessionId=(str, True), eventIds=(list, False))
        ),
        "hook.claim": Method(
            _guarded(
                lambda request: service.claim(
                    request["sessionId"], request["lifecycle"], request.get("maxEvents")
                )
            ),
            _CLAIM_PARAMS,
        ),
        "hook.reserve": Method(
            _guarded(
                lambda request: service.reserve(
                    request["sessionId"], request["lifecycle"], request.get("maxEvents")
                )
            ),
            _CLAIM_PARAMS,
            undelivered=service.release_undelivered,
        ),
        "hook.commit": Method(
            _guarded(lambda request: service.commit(request["reservationId"])), reservation
        ),
        "hook.release": Method(_guarded(hook_release), reservation),
        "hook.preview": Method(
            _guarded(lambda request: service.preview(request["sessionId"], request.get("limit"))),
            params(sessionId=(str, True), limit=ParamSpec("int", minimum=1)),
        ),
        "hook.previewReminder": Method(_guarded(hook_preview_reminder), session_only),
        "hook.diagnose": Method(
            _guarded(
                lambda request: service.diagnose(
                    request["sessionId"], request["lifecycle"], request.get("socketPath")
                )
            ),
            params(sessionId=(str, True), lifecycle=_LIFECYCLE, socketPath=(str, False)),
        ),
        # verify's cleanup in a workspace daemon: scratch objects only (store/suppressions.py).
        "events.suppressObject": Method(
            _object_call(service, _suppress_object),
            params(
                monitorId=(str, True),
                objectKey=(str, True),
                workspacePath=(str, False),
                ttlMs=ParamSpec(type="int", required=True, minimum=1),
            ),
        ),
        "events.retractObject": Method(
            _object_call(service, _retract_object),
            params(
                monitorId=(str, True),
                objectKey=(str, False),
                eventIds=(list, False),
                workspacePath=(str, False),
            ),
        ),
    }


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
    from agentmonitors.store.suppressions import suppress_object

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
    from agentmonitors.store.suppressions import retract_events, retract_object

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

"""The follow transport: one line per delivery on ``events follow``'s stdout.

See docs/architecture.md, "Transports". ``events follow`` (``transports/follow.py``) runs
under Claude Code's Monitor tool while the session waits, so it claims what the end of a
turn would surface: ``turn-interruptible`` first (settled high, normal as its coalesced
reminder), then ``turn-idle`` (the low reminder). It is sized as the hook is (its cap, its
layout), so events settling together share one reservation and so one line
(``delivery/follow_line.py``), committed when written. Its heartbeat keeps the daemon up;
``doctor`` matches it by the AgentMon session it follows, and expects none: the agent
starts it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors.delivery.follow_line import MAX_FOLLOW_LINE, follow_line
from agentmonitors.delivery.packing import HOOK_PACKING
from agentmonitors.delivery.render import render_hook_shown
from agentmonitors.delivery.sizing import reserve_sized
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT
from agentmonitors.delivery.transports.base import BaseTransport, InvalidRequest
from agentmonitors.delivery.transports.health import (
    Expected,
    Lead,
    TransportHealth,
    binding_problems,
    freshness,
    same_path,
)
from agentmonitors.workspace import enable_file_path, live_setting, read_local_state

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["FOLLOW_LIFECYCLES", "TRANSPORT", "FollowTransport"]

FOLLOW_LIFECYCLES = ("turn-interruptible", "turn-idle")
ACTIVE = "active"


class FollowTransport(BaseTransport):
    name = "follow"
    cap = MAX_FOLLOW_LINE
    min_cap = 80
    # Sized as the hook is: the line is made from the claim the hook's layout reserved.
    packing = HOOK_PACKING
    holds_daemon = True

    def render(
        self, claim: Mapping[str, Any], socket_path: str, *, more_deferred: bool, cap: int
    ) -> tuple[str, list[str]]:
        return render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``sessionId`` required (the AgentMon session followed); ``cap`` at least 80."""
        session_id = request.get("sessionId")
        if not isinstance(session_id, str):
            raise InvalidRequest("the follow transport needs sessionId")
        cap = request.get("cap")
        if cap is not None and cap < self.min_cap:
            raise InvalidRequest(f"the follow transport's cap is at least {self.min_cap}")
        return _reserve_follow(service, session_id, socket_path=request["socketPath"], cap=cap)

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        health = _follow_health(records, leads, expected)
        _live_setting_problem(health, expected.workspace)
        return health

    def describe_binding(self, bound: Mapping[str, Any]) -> str:
        if bound.get("hostSessionId") and bound.get("sessionId"):
            # The plugin's monitor: Claude Code started it, with the host's id.
            return (
                f" (plugin monitor of Claude Code session {bound['hostSessionId']}: session"
                f" {bound['sessionId']}, bound to {bound.get('workspacePath')})"
            )
        if bound.get("sessionId"):
            # A follower serves one session: name it, as the Monitor command does.
            return f" (session {bound['sessionId']}, bound to {bound.get('workspacePath')})"
        return super().describe_binding(bound)


def _reserve_follow(
    service: DeliveryService, session_id: str, *, socket_path: str, cap: int | None = None
) -> dict[str, Any]:
    """The session and its next delivery line, reserved; ``reservation`` None when none.

    A session that is no longer active gets no reservation (follow exits on it).
    Sizing uses the hook's cap, so events settling together share one reservation
    and so one line.
    """
    session = service.get_session(session_id)
    reply: dict[str, Any] = {"session": session, "reservation": None, "text": ""}
    if session.get("status") != ACTIVE:
        return reply
    for lifecycle in FOLLOW_LIFECYCLES:
        with service.one_instant():
            reservation, _text, _more, _shown = reserve_sized(
                service,
                session_id,
                lifecycle,
                transport=TRANSPORT.name,
                socket_path=socket_path,
                cap=MAX_ADDITIONAL_CONTEXT,
            )
        if reservation is None:
            continue
        line = follow_line(reservation["claim"], socket_path, cap=cap or MAX_FOLLOW_LINE)
        if not line:
            service.release(reservation["reservationId"])
            continue
        # A line names each change, never shows it: the session's diff base stays at
        # the version it last saw, so the `diff --session` it may run next is the change
        # (docs/architecture.md, "The life of one event", step 7).
        service.reservations.narrow_seen(reservation["reservationId"], ())
        reply.update(reservation=reservation, text=line, lifecycle=lifecycle)
        return reply
    return reply


def _follow_health(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> TransportHealth:
    """``events follow`` runs: the active leads' followers, freshest first, then any
    other follower of this workspace. None is expected: the plugin's monitor runs one
    only in interactive sessions, and elsewhere it is the agent's to start. A plugin
    follower (its record names the host session) is named as such, per session."""
    transport = TransportHealth(TRANSPORT.name)
    sessions = {lead.session_id for lead in leads}
    matched = [record for record in records if record.get("sessionId") in sessions]
    matched.sort(key=lambda record: freshness(record, expected), reverse=True)
    others = [
        record
        for record in records
        if record.get("sessionId") not in sessions
        and same_path(record.get("workspacePath"), expected.workspace)
    ]
    transport.records.extend(matched + others)
    for record in matched:
        session = record.get("sessionId")
        command = f"agentmonitors events follow --session {session} --socket {expected.socket_path}"
        host = record.get("hostSessionId")
        if host:
            stale_fix = (
                f"the plugin's follower of Claude Code session {host} is gone, and Claude Code"
                " never restarts it: the hooks still deliver; a new Claude Code session arms it"
                f" again, or start the Monitor tool with `{command}`"
            )
        else:
            stale_fix = (
                "the follower is gone (killed, or its Monitor stopped it); start the"
                f" Monitor tool again with `{command}`"
            )
        binding_problems(transport, record, expected, f"{session}: ", stale_fix=stale_fix)
    return transport


def _live_setting_problem(transport: TransportHealth, workspace: str) -> None:
    """An enable file ``live:`` value that is neither on nor off (session start then
    keeps offering live updates, its default)."""
    value = read_local_state(workspace).live
    if live_setting(value) is None:
        path = enable_file_path(workspace)
        transport.add(
            "live-setting-invalid",
            f"{path}: live: {value!r} is neither on nor off, so session start keeps offering"
            " live updates (the default)",
            f"write `live: on` or `live: off` in {path}",
        )


TRANSPORT = FollowTransport()

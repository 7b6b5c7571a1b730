"""The follow transport: one line per delivery on ``events follow``'s stdout.

See docs/architecture.md, "Transports". ``events follow`` (``transports/follow.py``) runs
while the session may be idle, so each line is a wake: it names what settled since the
last line (``delivery/follow_decide.py``: every settled high event, every normal and low
one nothing surfaced yet, of the urgencies the enable file's ``wake:`` lets wake the
session), each event once, and never moves the session's diff base (a line names a
change, it never shows it). Events settling together share one reservation and so one
line (``delivery/follow_line.py``), committed when written. Its heartbeat keeps the
daemon up; ``doctor`` matches it by the AgentMon session it follows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors.delivery.follow_decide import decide_follow
from agentmonitors.delivery.follow_line import MAX_FOLLOW_LINE, events_that_fit, follow_line
from agentmonitors.delivery.transports.health import (
    Expected,
    Lead,
    TransportHealth,
    binding_problems,
    freshness,
    same_path,
)
from agentmonitors.delivery.transports.hook import HookShaped
from agentmonitors.workspace import (
    WAKE_ALL,
    enable_file_path,
    live_setting,
    read_local_state,
    wake_setting,
)

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["TRANSPORT", "FollowTransport"]

ACTIVE = "active"


# Sized as the hook is: the line is made from the claim the hook's layout reserved.
class FollowTransport(HookShaped):
    name = "follow"
    cap = MAX_FOLLOW_LINE
    min_cap = 80
    holds_daemon = True

    def reserve_rendered(
        self, service: DeliveryService, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``sessionId`` required (the AgentMon session followed); ``cap`` at least 80."""
        session_id = self.required(request, "sessionId")
        cap = self.requested_cap(request)
        return _reserve_follow(service, session_id, socket_path=request["socketPath"], cap=cap)

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        health = _follow_health(records, leads, expected)
        _setting_problems(health, expected.workspace)
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
    """The session and its next live line, reserved; ``reservation`` None when none.

    A session that is no longer active gets no reservation (follow exits on it). The line
    names what settled since the last one (``delivery/follow_decide.py``), of the
    urgencies the enable file's ``wake:`` lets wake the session; when the ids of all of it
    would crowd the line, it names the first that fit and the rest make the next line.
    """
    session = service.get_session(session_id)
    reply: dict[str, Any] = {"session": session, "reservation": None, "text": ""}
    if session.get("status") != ACTIVE:
        return reply
    cap = cap or MAX_FOLLOW_LINE
    urgencies = _wake_urgencies(session.get("workspacePath"))
    limit: int | None = None
    while True:
        reservation = service.reserve_decided(
            session_id,
            functools.partial(decide_follow, urgencies=urgencies, max_events=limit),
            transport=TRANSPORT.name,
        )
        if reservation is None:
            return reply
        claim = reservation["claim"]
        fit = events_that_fit(claim, socket_path, cap=cap)
        if limit is None and fit < len(claim["events"]):
            service.release(reservation["reservationId"])
            limit = fit
            continue
        line = follow_line(claim, socket_path, cap=cap)
        if not line:
            service.release(reservation["reservationId"])
            return reply
        reply.update(reservation=reservation, text=line, lifecycle=claim["lifecycle"])
        return reply


_WAKE_CACHE: dict[str, tuple[tuple[int, int] | None, frozenset[str]]] = {}


def _wake_urgencies(workspace: object) -> frozenset[str]:
    """The urgencies the workspace's ``wake:`` lets wake an idle session (every one when
    it is absent or not understood: ``doctor`` reports that). The enable file is read
    again only when it changed: a follower asks ten times a second."""
    if not isinstance(workspace, str) or not workspace:
        return WAKE_ALL
    path = enable_file_path(workspace)
    try:
        found = os.stat(path)
        stamp: tuple[int, int] | None = (found.st_mtime_ns, found.st_size)
    except OSError:
        stamp = None
    cached = _WAKE_CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    urgencies = wake_setting(read_local_state(workspace).wake) or WAKE_ALL
    if len(_WAKE_CACHE) > 256:
        _WAKE_CACHE.clear()
    _WAKE_CACHE[path] = (stamp, urgencies)
    return urgencies


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


def _setting_problems(transport: TransportHealth, workspace: str) -> None:
    """Enable file ``live:`` and ``wake:`` values that are none of the words each takes;
    the default then holds (session start keeps offering live updates; every urgency
    wakes an idle session)."""
    state = read_local_state(workspace)
    settings = (
        ("live", state.live, live_setting(state.live), "on", "off",
         "session start keeps offering live updates (the default)"),
        ("wake", state.wake, wake_setting(state.wake), "all", "high",
         "every change wakes an idle session (the default)"),
    )  # fmt: skip
    for key, value, understood, first, second, fallback in settings:
        if understood is None:
            path = enable_file_path(workspace)
            transport.add(
                f"{key}-setting-invalid",
                f"{path}: {key}: {value!r} is neither {first} nor {second}, so {fallback}",
                f"write `{key}: {first}` or `{key}: {second}` in {path}",
            )


TRANSPORT = FollowTransport()

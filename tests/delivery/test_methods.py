"""The delivery IPC methods, dispatched through the real server's request handling."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentmonitors.daemon.delivery_methods import delivery_methods
from agentmonitors.daemon.server import DaemonServer
from agentmonitors.delivery.vocabulary import REMINDER

from .conftest import SETTLE, World


class Ipc:
    def __init__(self, world: World) -> None:
        self.server = DaemonServer(str(world.root / "unused.sock"), delivery_methods(world.service))

    def reply(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        line = json.dumps({"id": "r1", "method": method, "params": params}).encode() + b"\n"
        answer: dict[str, Any] = json.loads(asyncio.run(self.server.dispatch(line)))
        return answer

    def __call__(self, method: str, **params: Any) -> Any:
        answer = self.reply(method, params)
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, method: str, **params: Any) -> str:
        answer = self.reply(method, params)
        assert "result" not in answer, answer
        return str(answer["error"])


@pytest.fixture
def ipc(world: World) -> Ipc:
    return Ipc(world)


def test_method_names(world: World) -> None:
    assert sorted(delivery_methods(world.service)) == sorted(
        [
            "session.open", "session.close", "session.list", "events.list", "events.ack",
            "hook.claim", "hook.reserve", "hook.commit", "hook.release", "hook.preview",
            "hook.previewReminder", "hook.diagnose", "delivery.reserveRendered",
            "channel.sent", "channel.status",
            "events.suppressObject", "events.retractObject",
        ]
    )  # fmt: skip


def test_session_round_trip(world: World, ipc: Ipc) -> None:
    opened = ipc(
        "session.open",
        adapter="claude-code",
        hostSessionId="h1",
        agentIdentity="h1",
        hookStatePath=str(world.root / "hs" / "hook-state.json"),
        workspacePath=world.workspace,
    )
    assert opened["hostSessionId"] == "h1" and opened["status"] == "active"
    assert ipc("session.open", hostSessionId="h1")["id"] == opened["id"]
    assert [s["id"] for s in ipc("session.list")] == [opened["id"]]
    assert ipc("session.close", sessionId=opened["id"])["status"] == "dormant"
    assert "role must be one of lead, subagent" in ipc.error(
        "session.open", hostSessionId="h2", role="boss"
    )


def test_unknown_sessions_and_bad_lifecycles_are_request_errors(ipc: Ipc) -> None:
    for method, extra in (
        ("session.close", {}),
        ("events.ack", {}),
        ("events.list", {}),
        ("hook.claim", {"lifecycle": "turn-idle"}),
        ("hook.reserve", {"lifecycle": "post-compact"}),
        ("hook.preview", {}),
        ("hook.previewReminder", {}),
        ("hook.diagnose", {"lifecycle": "turn-interruptible"}),
    ):
        assert ipc.error(method, sessionId="ghost", **extra) == "Session not found: ghost"
    message = ipc.error("hook.claim", sessionId="ghost", lifecycle="whenever")
    assert "turn-interruptible, turn-idle, post-compact" in message
    assert "maxEvents" in ipc.error(
        "hook.claim", sessionId="x", lifecycle="turn-idle", maxEvents="many"
    )


def test_claim_reserve_commit_release_ack_over_ipc(world: World, ipc: Ipc) -> None:
    session = world.session()
    normal = world.emit("normal")
    high = world.emit("high", "h")
    assert ipc("hook.preview", sessionId=session) == []
    assert ipc("hook.claim", sessionId=session, lifecycle="turn-interruptible") is None
    world.advance(SETTLE)
    assert ipc("hook.previewReminder", sessionId=session) == {"reminder": REMINDER}
    reservation = ipc("hook.reserve", sessionId=session, lifecycle="turn-interruptible")
    assert [e["eventId"] for e in reservation["claim"]["events"]] == [high]
    assert ipc("hook.release", reservationId=reservation["reservationId"]) == {"ok": True}
    again = ipc("hook.reserve", sessionId=session, lifecycle="turn-interruptible", maxEvents=1)
    claim = ipc("hook.commit", reservationId=again["reservationId"])
    assert claim == again["claim"] and claim["coalescedNormalCount"] == 1
    assert ipc("hook.commit", reservationId=again["reservationId"]) is None
    listed = ipc("events.list", sessionId=session, unreadOnly=True)
    assert {e["id"]: e["deliveryState"] for e in listed} == {high: "claimed", normal: "claimed"}
    diagnosis = ipc("hook.diagnose", sessionId=session, lifecycle="turn-interruptible")
    assert [h["reason"] for h in diagnosis["holds"]] == ["already-claimed"]
    assert ipc("events.ack", sessionId=session, eventIds=[high, "bogus"]) == {
        "ok": True,
        "acknowledged": 1,
        "heldByDelivery": 0,
        "unknownEventIds": ["bogus"],
    }
    assert ipc("events.ack", sessionId=session) == {
        "ok": True,
        "acknowledged": 1,
        "heldByDelivery": 0,
    }
    assert ipc("events.list", sessionId=session, unreadOnly=True) == []


def test_events_list_params(world: World, ipc: Ipc) -> None:
    world.session()
    first = world.emit("normal", tags=("a",), scope={"k": ["v"]})
    world.advance(3_000)
    second = world.emit("high")
    since = ipc("events.list")[1]["createdAt"]
    assert [e["id"] for e in ipc("events.list", since=since)] == [second]
    assert [e["id"] for e in ipc("events.list", tags=["a"], scope={"k": "v"})] == [first]
    assert [e["id"] for e in ipc("events.list", urgency="high")] == [second]
    assert "since" in ipc.error("events.list", since="yesterday")
    assert "urgency" in ipc.error("events.list", urgency="urgent")


def test_reserve_rendered_sizes_reserves_and_renders_in_one_request(world: World, ipc: Ipc) -> None:
    assert ipc(
        "delivery.reserveRendered",
        transport="hook",
        hostSessionId="nobody",
        lifecycle="turn-interruptible",
        socketPath="/s.sock",
    ) == {"session": None}
    session = world.session()
    host = world.service.get_session(session)["hostSessionId"]
    first = world.emit("high")
    world.advance(SETTLE)
    reply = ipc(
        "delivery.reserveRendered",
        transport="hook",
        hostSessionId=host,
        lifecycle="turn-interruptible",
        socketPath="/s.sock",
    )
    assert reply["session"]["id"] == session
    assert reply["shownEventIds"] == [first]
    assert reply["moreDeferred"] is False
    assert reply["text"].startswith("AgentMon: monitored changes are pending")
    assert f"--event-ids {first}" in reply["text"]
    claim = ipc("hook.commit", reservationId=reply["reservation"]["reservationId"])
    assert [event["eventId"] for event in claim["events"]] == [first]
    again = ipc(
        "delivery.reserveRendered",
        transport="hook",
        hostSessionId=host,
        lifecycle="turn-interruptible",
        socketPath="/s.sock",
    )
    assert again["reservation"] is None and again["text"] == ""

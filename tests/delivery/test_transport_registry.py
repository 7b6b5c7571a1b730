"""The transport registry: every transport can be sized and diagnosed, and one registered
from a test works through the generic paths (docs/architecture.md, "Transports")."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.channels import channel_attached
from agentmonitors.delivery.heartbeats import transports_dir, write_heartbeat
from agentmonitors.delivery.packing import CHANNEL_PACKING, Packing
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.transports.base import BaseTransport, Transport
from agentmonitors.delivery.transports.health import (
    Expected,
    Lead,
    TransportHealth,
    binding_problems,
)
from agentmonitors.delivery.transports.registry import (
    register,
    transport,
    transport_problem,
    transports,
    unregister,
)
from agentmonitors.diagnosis.doctor_text import _transport_line
from agentmonitors.diagnosis.doctor_transports import transports as doctor_rows
from agentmonitors.diagnosis.holds import listener_phrase, listeners

from .conftest import SETTLE, World
from .test_methods import Ipc


class SmokeTransport(BaseTransport):
    """A transport declared in tests only: one line naming the events, committed on write."""

    name = "smoke"
    cap = 500
    packing: Packing | None = CHANNEL_PACKING
    holds_daemon = True

    def render(
        self, claim: Mapping[str, Any], socket_path: str, *, more_deferred: bool, cap: int
    ) -> tuple[str, list[str]]:
        ids = [str(event["eventId"]) for event in claim.get("events") or []]
        text = f"smoke: {','.join(ids)}" if ids else str(claim.get("message") or "")
        return text[:cap], ids

    def reserve_rendered(self, service: Any, request: Mapping[str, Any]) -> dict[str, Any]:
        return dict(
            reserve_rendered(
                service,
                request["hostSessionId"],
                "turn-interruptible",
                socket_path=request["socketPath"],
                transport=self.name,
                cap=request.get("cap"),
            )
        )

    def doctor(
        self, records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
    ) -> TransportHealth:
        health = TransportHealth(self.name)
        health.records.extend(records)
        for record in records:
            binding_problems(health, record, expected, "")
        return health


@pytest.fixture
def smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmokeTransport]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    registered = SmokeTransport()
    register(registered)
    try:
        yield registered
    finally:
        unregister(registered.name)


def test_every_registered_transport_can_be_sized_rendered_and_diagnosed() -> None:
    found = transports()
    assert [kind.name for kind in found][:3] == ["hook", "channel", "follow"]
    for kind in found:
        assert isinstance(kind, Transport)
        assert transport_problem(kind) is None, kind.name
        assert isinstance(kind.packing, Packing) and kind.cap >= kind.min_cap >= 1
        assert callable(kind.doctor) and callable(kind.render)
        assert transport(kind.name) is kind


def test_a_transport_without_sizing_or_doctor_checks_is_refused() -> None:
    class Unsized(SmokeTransport):
        name = "unsized"
        packing = None

    class Undiagnosed(BaseTransport):
        name = "undiagnosed"
        cap = 100
        packing = CHANNEL_PACKING

        def render(self, *args: Any, **kwargs: Any) -> tuple[str, list[str]]:
            return "", []

        def reserve_rendered(self, service: Any, request: Mapping[str, Any]) -> dict[str, Any]:
            return {}

    with pytest.raises(ValueError, match="sizing"):
        register(Unsized())
    with pytest.raises(ValueError, match=r"Transport protocol|doctor"):
        register(Undiagnosed())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already registered"):
        register(transport("hook"))
    with pytest.raises(ValueError, match="unknown transport"):
        transport("smoke-signal")
    assert "unsized" not in {kind.name for kind in transports()}


def test_a_test_transport_is_sized_rendered_and_served_by_the_one_ipc_method(
    world: World, smoke: SmokeTransport
) -> None:
    session = world.session()
    host = world.service.get_session(session)["hostSessionId"]
    first = world.emit("high")
    world.advance(SETTLE)
    ipc = Ipc(world)  # built after registering: its choices name the test transport
    reply = ipc("delivery.reserveRendered", transport="smoke", hostSessionId=host, socketPath="/s")
    assert reply["text"] == f"smoke: {first}"
    assert reply["shownEventIds"] == [first]
    assert "deliveryId" not in reply  # it commits when written, not on proof
    claim = ipc("hook.commit", reservationId=reply["reservation"]["reservationId"])
    assert [event["eventId"] for event in claim["events"]] == [first]
    assert "transport" in ipc.error(
        "delivery.reserveRendered", transport="smoke-signal", hostSessionId=host, socketPath="/s"
    )


def test_a_test_transport_heartbeat_is_read_by_holds_doctor_and_the_idle_reaper(
    tmp_path: Path, smoke: SmokeTransport
) -> None:
    workspace, socket = str(tmp_path / "ws"), str(tmp_path / "s.sock")
    write_heartbeat(
        "smoke", "k1", workspace=workspace, socket_path=socket, session_id="S1", ttl_ms=30_000
    )
    records = [
        json.loads(Path(transports_dir(), name).read_text())
        for name in os.listdir(transports_dir())
    ]
    now_ms = time.time_ns() // 1_000_000
    found = listeners(records, "S1", None, now_ms)
    assert found["smoke"]["listening"] is True
    assert "smoke listening" in listener_phrase(found)
    assert channel_attached(socket, workspace, now_ms)  # it declares holds_daemon
    expected = Expected(
        workspace=workspace,
        socket_path=socket,
        home=os.path.expanduser("~"),
        data_root=os.path.dirname(os.path.dirname(transports_dir())),
        version=str(records[0]["version"]),
        wall_ms=now_ms,
    )
    rows = {row["name"]: row for row in doctor_rows([Lead("S1", "h1")], expected, [])}
    assert list(rows)[:3] == ["hook", "channel", "follow"]
    assert rows["smoke"]["healthy"] is True and rows["smoke"]["problems"] == []
    assert _transport_line(rows["smoke"]) == [f"  smoke: healthy (bound to {workspace})"]

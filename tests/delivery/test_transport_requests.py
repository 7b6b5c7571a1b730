"""What each transport refuses in ``delivery.reserveRendered``, word for word: the checks
live once on ``BaseTransport`` and every transport names itself in them
(docs/architecture.md, "Transports")."""

from __future__ import annotations

import pytest

from .conftest import World
from .test_methods import Ipc


@pytest.fixture
def ipc(world: World) -> Ipc:
    return Ipc(world)


def test_a_request_missing_what_the_transport_needs_is_refused_naming_it(
    world: World, ipc: Ipc
) -> None:
    needs = {
        "hook": "the hook transport needs hostSessionId and lifecycle",
        "channel": "the channel transport needs hostSessionId",
        "codex-queue": "the codex-queue transport needs hostSessionId",
        "follow": "the follow transport needs sessionId",
    }
    for name, message in needs.items():
        assert message in ipc.error("delivery.reserveRendered", transport=name, socketPath="/s")


def test_a_cap_below_the_transport_minimum_is_refused_and_the_minimum_is_allowed(
    world: World, ipc: Ipc
) -> None:
    session = world.session()
    host = world.service.get_session(session)["hostSessionId"]
    follow = {"transport": "follow", "sessionId": session, "socketPath": "/s"}
    queue = {"transport": "codex-queue", "hostSessionId": host, "socketPath": "/s"}
    assert "the follow transport's cap is at least 80" in ipc.error(
        "delivery.reserveRendered", cap=79, **follow
    )
    assert "the codex-queue transport's cap is at least 200" in ipc.error(
        "delivery.reserveRendered", cap=199, **queue
    )
    assert ipc("delivery.reserveRendered", cap=80, **follow)["reservation"] is None
    assert ipc("delivery.reserveRendered", cap=200, **queue)["reservation"] is None

"""Acknowledging a large backlog: everything, folded rows included, in one pass.

How long it takes is measured by ``benchmarks/bench_ack.py``; these tests hold what it
must do, at the size that used to stall the daemon for minutes.
"""

from __future__ import annotations

import pytest

from agentmonitors.delivery.projection import project_event
from agentmonitors.monitor.model import UrgencyBand
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from tests.delivery.conftest import SETTLE, World, event_ids

TI = "turn-interruptible"
BACKLOG = 20_000
NET_OBJECTS = 30
NET_VERSIONS = 10


def _monitor(strategy: str) -> CapturedMonitor:
    return CapturedMonitor(
        id=strategy,
        display_name=strategy,
        file_path=f"/ws/.claude/monitors/{strategy}/MONITOR.md",
        instructions="Look at it.",
        source_name="scripted",
        name=None,
        band=UrgencyBand("high", "high"),
        baseline_strategy=strategy,
        tags=(),
    )


def seed_backlog(world: World) -> None:
    """``BACKLOG`` high events, one second apart, in one transaction (as a busy tick writes).

    The first ones are versions of a few ``net`` objects, so a claim folds most of them;
    the rest are distinct objects.
    """
    net, plain = _monitor("net"), _monitor("incremental")
    start = world.clock.now_ms()
    with world.db.write() as conn:
        for index in range(BACKLOG):
            collapsing = index < NET_OBJECTS * NET_VERSIONS
            observation = Observation(
                title=f"change {index}",
                snapshot_text=f"version {index}\n",
                object_key=f"net-{index % NET_OBJECTS}" if collapsing else f"file-{index}",
            )
            at = start + index * 1000
            envelope = envelope_for(net if collapsing else plain, observation, at)
            materialize(conn, envelope, world.workspace, at, project_event)
    world.advance(BACKLOG * 1000 + SETTLE)


def unacknowledged(world: World, session: str) -> int:
    (row,) = world.rows(
        "SELECT COUNT(*) AS n FROM session_event_state"
        " WHERE session_id = ? AND acknowledged_at IS NULL",
        session,
    )
    return int(row["n"])


def folded(world: World, session: str) -> int:
    (row,) = world.rows(
        "SELECT COUNT(*) AS n FROM session_event_state"
        " WHERE session_id = ? AND net_suppressed_at IS NOT NULL",
        session,
    )
    return int(row["n"])


@pytest.mark.slow
def test_ack_of_a_large_backlog_acknowledges_every_row_folded_ones_too(world: World) -> None:
    by_all = world.session("host-all")
    by_ids = world.session("host-ids")
    seed_backlog(world)
    for session in (by_all, by_ids):
        # The net objects' survivors come first: this claim folds every older version.
        claim = world.service.claim(session, TI, NET_OBJECTS)
        assert len(event_ids(claim)) == NET_OBJECTS
        assert folded(world, session) == NET_OBJECTS * (NET_VERSIONS - 1)
    visible = BACKLOG - NET_OBJECTS * (NET_VERSIONS - 1)

    # `events ack --all`.
    result = world.service.ack_counted(by_all)
    assert result == {"acknowledged": visible, "heldByDelivery": 0, "unknownEventIds": []}
    assert unacknowledged(world, by_all) == 0

    # `events ack <every id the unread list shows>`.
    listed = world.unread_ids(by_ids)
    assert len(listed) == visible
    result = world.service.ack_counted(by_ids, listed)
    assert result == {"acknowledged": visible, "heldByDelivery": 0, "unknownEventIds": []}
    assert unacknowledged(world, by_ids) == 0
    assert world.unread_ids(by_ids) == []


def _net(world: World, key: str, content: str, *, monitor: str = "notes") -> str:
    world.advance(1000)
    return world.emit(
        "high", f"{key} changed", snapshot=content, object_key=key, strategy="net", monitor=monitor
    )


def test_a_folded_row_acknowledges_only_older_versions_of_its_own_object(world: World) -> None:
    session = world.session()
    first = _net(world, "a.md", "1\n")
    second = _net(world, "a.md", "2\n")
    other_object = _net(world, "b.md", "1\n")
    other_monitor = _net(world, "a.md", "1\n", monitor="docs")
    newest = _net(world, "a.md", "3\n")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert set(event_ids(claim)) == {other_object, other_monitor, newest}
    assert world.state(session, second)["net_suppressed_at"] is not None

    # Naming a folded version: the one before it follows, nothing newer and nothing of
    # another object or monitor does.
    assert world.service.ack_counted(session, [second])["acknowledged"] == 1
    acknowledged = {
        event_id
        for event_id in (first, second, other_object, other_monitor, newest)
        if world.state(session, event_id)["acknowledged_at"] is not None
    }
    assert acknowledged == {first, second}

"""``inspect``'s armed bucket for each hold, over a real database and a manual clock.

Events are written through the runtime's ``materialize`` and claimed through the real
delivery service; every report must leave the database as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import iso_from_ms
from agentmonitors.diagnosis.agent_inspect import inspect_report
from agentmonitors.fastpath.ulid import new_id
from tests.delivery.conftest import START, World


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    created = World(tmp_path)
    try:
        yield created
    finally:
        created.db.close()


TABLES = ("session_event_state", "session_object_cursor", "agent_sessions", "monitor_state")


def dump(world: World) -> dict[str, list[dict[str, Any]]]:
    return {table: world.rows(f"SELECT * FROM {table} ORDER BY id") for table in TABLES}


def report(world: World, session: str, **options: Any) -> dict[str, Any]:
    before = dump(world)
    with world.db.read() as conn:
        found = inspect_report(
            conn,
            workspace=world.workspace,
            session_id=session,
            now_ms=world.clock.now_ms(),
            **options,
        )
    assert dump(world) == before
    (entry,) = found["sessions"]
    return dict(entry)


def armed(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    (found,) = [item for item in entry["armed"]["entries"] if item["reason"] == reason]
    return dict(found)


def ids(bucket: dict[str, Any]) -> list[str]:
    return [item["eventId"] for item in bucket["events"]]


def test_a_reminder_muted_until_acknowledged_holds_the_new_rows(world: World) -> None:
    session = world.session()
    first = world.emit("normal")
    assert world.service.claim(session, "turn-interruptible") is not None
    second = world.emit("normal")

    entry = report(world, session)
    hold = armed(entry, "coalesced-until-ack")
    assert hold["eventIds"] == [second] and hold["earliestFireAt"] is None
    assert hold["ackCommand"].endswith(f"--event-ids {first}")
    assert ids(entry["received"]) == [first] and entry["pending"]["count"] == 0

    world.service.ack(session, [first])
    entry = report(world, session)
    assert ids(entry["pending"]) == [second] and entry["armed"]["count"] == 0
    assert entry["received"]["events"][0]["state"] == "acknowledged"


def test_a_net_collapse_is_met_and_held_and_the_survivor_is_received(world: World) -> None:
    session = world.session()
    older = world.emit("high", snapshot="a", object_key="k", strategy="net")
    world.advance(1_000)
    newer = world.emit("high", snapshot="b", object_key="k", strategy="net")

    entry = report(world, session)
    settling = armed(entry, "settle-window")
    assert settling["eventIds"] == [older, newer]
    assert settling["earliestFireAt"] == iso_from_ms(START + 15_000)

    world.advance(15_000)
    assert ids(report(world, session)["pending"]) == [older, newer]
    assert world.service.claim(session, "turn-interruptible") is not None
    entry = report(world, session)
    net = armed(entry, "net")
    assert net["eventIds"] == [older] and net["earliestFireAt"] is None
    assert ids(entry["received"]) == [newer] and entry["pending"]["count"] == 0


def test_notify_holds_name_their_monitor_and_earliest_fire_time(world: World) -> None:
    session = world.session()
    now = world.clock.now_ms()
    held = {
        "observation": {"title": "t", "objectKey": "reports/a.txt"},
        "observedAt": iso_from_ms(now),
    }
    states = {
        "nightly": {"pendingRollup": {"observations": [held, held]}},
        "alerts": {"suppressedUntil": iso_from_ms(now + 60_000)},
        "build": {"pendingDebounce": {"observations": [held], "dueAt": iso_from_ms(now + 5_000)}},
        "ephemeral:someone-else/01X": {
            "pendingDebounce": {"observations": [held], "dueAt": iso_from_ms(now)}
        },
    }
    with world.db.write() as conn:
        for monitor_id, notify in states.items():
            conn.execute(
                "INSERT INTO monitor_state (id, monitor_id, workspace_path, notify_state,"
                " updated_at) VALUES (?, ?, ?, ?, ?)",
                (new_id(now), monitor_id, world.workspace, json.dumps(notify), now // 1000),
            )

    def window_of(monitor_id: str) -> tuple[str, str] | None:
        return ("0 9 * * *", "UTC") if monitor_id == "nightly" else None

    entry = report(world, session, window_of=window_of)
    by_monitor = {item["monitorIds"][0]: item for item in entry["armed"]["entries"]}
    # Another session's watch is none of this session's business.
    assert set(by_monitor) == {"nightly", "alerts", "build"}
    rollup = by_monitor["nightly"]
    assert (rollup["reason"], rollup["observations"]) == ("rollup", 2)
    assert rollup["objectKeys"] == ["reports/a.txt"]
    assert rollup["earliestFireAt"] == "2026-05-29T09:00:00.000Z"
    assert by_monitor["alerts"]["reason"] == "throttle"
    assert by_monitor["alerts"]["earliestFireAt"] == iso_from_ms(now + 60_000)
    assert by_monitor["build"]["reason"] == "debounce"
    assert by_monitor["build"]["earliestFireAt"] == iso_from_ms(now + 5_000)


def test_leased_and_capped_high_rows_are_held_with_their_reason(world: World) -> None:
    session = world.session()
    events = [
        world.emit("high", title=f"Alert {n}", summary=f"{n} " + "x" * 900, monitor=f"m{n}")
        for n in range(8)
    ]
    world.advance(15_000)

    entry = report(world, session, leased=lambda _session: frozenset({events[0]}))
    leased = armed(entry, "reserved-in-flight")
    assert leased["eventIds"] == [events[0]]
    capped = armed(entry, "deferred-by-cap")
    assert capped["eventIds"] and set(capped["eventIds"]) <= set(events[1:])
    shown = ids(entry["pending"])
    # Every event is in exactly one bucket.
    assert sorted(shown + leased["eventIds"] + capped["eventIds"]) == sorted(events)


def test_a_leased_row_behind_a_muted_reminder_still_lands_in_one_bucket(world: World) -> None:
    session = world.session()
    shown = world.emit("normal")
    assert world.service.claim(session, "turn-interruptible") is not None
    leased, waiting = world.emit("normal"), world.emit("normal")

    entry = report(world, session, leased=lambda _session: frozenset({leased}))
    assert armed(entry, "reserved-in-flight")["eventIds"] == [leased]
    assert armed(entry, "coalesced-until-ack")["eventIds"] == [waiting]
    assert ids(entry["received"]) == [shown] and entry["pending"]["count"] == 0


def test_a_hold_over_more_rows_than_listed_counts_the_rest_and_none_leaks_into_pending(
    world: World,
) -> None:
    session = world.session()
    first = world.emit("normal")
    assert world.service.claim(session, "turn-interruptible") is not None
    held = [world.emit("normal") for _ in range(25)]

    entry = report(world, session)
    hold = armed(entry, "coalesced-until-ack")
    assert (hold["eventCount"], hold["omittedEventIds"]) == (25, 5)
    assert hold["eventIds"] == held[:20]
    # Every row is in exactly one bucket, the ones past the listed twenty included.
    assert entry["pending"] == {"count": 0, "omitted": 0, "events": []}
    assert ids(entry["received"]) == [first]

    every = armed(report(world, session, show_all=True), "coalesced-until-ack")
    assert (every["eventIds"], every["omittedEventIds"]) == (held, 0)

"""``delivery.wait``: what answers a follower's held request, on a real store and a set clock.

No test sleeps: each wait is a task on the loop, the clock is moved by hand, and a tick
is stood in for by :meth:`LiveWaits.poke` (every tick pokes the waits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentmonitors.daemon.live_waits import LiveWaits
from tests.delivery.conftest import SETTLE, World

HOLD = {"holdMs": 60_000}


def run(scenario: Callable[[World, LiveWaits], Awaitable[None]], tmp_path: Path) -> None:
    world = World(tmp_path)
    asyncio.run(scenario(world, LiveWaits(world.service, world.clock)))


async def settled(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` is done once the loop has run everything ready."""
    for _ in range(5):
        await asyncio.sleep(0)
    return task.done()


def test_a_wait_answers_a_change_to_its_own_session_and_to_every_session(
    tmp_path: Path,
) -> None:
    async def scenario(world: World, waits: LiveWaits) -> None:
        mine, other = world.session("host-1"), world.session("host-2")
        first = await waits.wait({"sessionId": mine, **HOLD})  # no version yet: at once
        since = first["version"]
        task = asyncio.create_task(waits.wait({"sessionId": mine, "since": since, **HOLD}))
        waits.changed(other)
        assert not await settled(task)
        waits.changed(mine)
        assert await settled(task) and task.result()["why"] == "changed"

        task = asyncio.create_task(
            waits.wait({"sessionId": mine, "since": waits.version(mine), **HOLD})
        )
        waits.changed(None)  # a tick stored events: projected into every session
        assert await settled(task) and task.result()["why"] == "changed"

    run(scenario, tmp_path)


def test_a_high_event_settling_answers_once_the_clock_passes_its_window(
    tmp_path: Path,
) -> None:
    async def scenario(world: World, waits: LiveWaits) -> None:
        session = world.session()
        world.emit("high", "Deploy failed")
        since = waits.version(session)
        task = asyncio.create_task(waits.wait({"sessionId": session, "since": since, **HOLD}))
        world.advance(SETTLE - 1)
        waits.poke()
        assert not await settled(task)
        world.advance(1)
        waits.poke()
        assert await settled(task) and task.result()["why"] == "due"
        # Settled now: it no longer makes a wait due (nothing would loop on it).
        again = asyncio.create_task(waits.wait({"sessionId": session, "since": since, **HOLD}))
        waits.poke()
        assert not await settled(again)
        waits.close()
        assert await settled(again)

    run(scenario, tmp_path)


def test_another_transport_s_lease_lapsing_answers(tmp_path: Path) -> None:
    async def scenario(world: World, waits: LiveWaits) -> None:
        session = world.session()
        world.emit("normal", "Docs changed")
        reservation = world.service.reserve(session, "turn-interruptible")
        assert reservation is not None  # a hook holds the event for a while
        since = waits.version(session)
        task = asyncio.create_task(waits.wait({"sessionId": session, "since": since, **HOLD}))
        waits.poke()
        assert not await settled(task)
        world.advance(world.service.reservations.ttl_ms)
        waits.poke()
        assert await settled(task) and task.result()["why"] == "due"

    run(scenario, tmp_path)


def test_an_ended_session_and_a_stopping_daemon_answer_at_once(tmp_path: Path) -> None:
    async def scenario(world: World, waits: LiveWaits) -> None:
        session = world.session()
        since = waits.version(session)
        task = asyncio.create_task(waits.wait({"sessionId": session, "since": since, **HOLD}))
        assert not await settled(task)
        world.service.close_session(session)  # (the daemon also bumps its version)
        waits.poke()
        assert await settled(task)

        other = world.session("host-2")
        since = waits.version(other)
        task = asyncio.create_task(waits.wait({"sessionId": other, "since": since, **HOLD}))
        assert not await settled(task)
        waits.close()
        assert await settled(task) and waits.waiting() == 0

    run(scenario, tmp_path)


def test_a_quiet_hold_keeps_the_session_active_writing_at_most_once_a_minute(
    tmp_path: Path,
) -> None:
    """The follower skips its reserve after such a hold, so the hold must do what that
    reserve did for the session: keep it from turning dormant."""

    async def scenario(world: World, waits: LiveWaits) -> None:
        session = world.session()

        def last_active() -> int:
            query = "SELECT last_active_at FROM agent_sessions WHERE id = ?"
            return int(world.rows(query, session)[0]["last_active_at"])

        world.advance(10 * 60_000)
        since = waits.version(session)
        quick = {"sessionId": session, "since": since, "holdMs": 5}
        answer = await waits.wait(quick)
        assert answer == {"version": since, "why": "hold", "kept": True}
        assert last_active() == world.clock.now_ms() // 1000
        kept_at = last_active()

        world.advance(30_000)  # fresh enough: no write
        assert (await waits.wait(quick))["kept"] is True
        assert last_active() == kept_at
        world.advance(30_000)
        await waits.wait(quick)
        assert last_active() == kept_at + 60

    run(scenario, tmp_path)

"""Who receives a watch's event, decided as the event is stored (real SQLite file, manual clock).

A cancel or a session close can land between a tick's observation and the insert of
its event: the event is then kept but projected to nobody. These races cannot be
timed against a daemon process, so the insert is driven directly through
``materialize`` with the daemon's own projection.
"""

from __future__ import annotations

from agentmonitors.delivery.watches import cancel_watch, declaring_session, register_watch
from agentmonitors.store.ephemeral import EphemeralRow

from .conftest import World


def declare(world: World, session_id: str) -> EphemeralRow:
    with world.db.write() as conn:
        session = declaring_session(conn, session_id, world.workspace)
        return register_watch(
            conn,
            session,
            workspace=world.workspace,
            source_name="file-fingerprint",
            scope={"globs": ["status.txt"]},
            band=("normal", "normal"),
            instruction="Look.",
            display_name=None,
            now_ms=world.clock.now_ms(),
        )


def recipients(world: World, event_id: str) -> list[str]:
    rows = world.rows("SELECT session_id FROM session_event_state WHERE event_id = ?", event_id)
    return [str(row["session_id"]) for row in rows]


def test_a_live_watch_projects_into_its_session_only(world: World) -> None:
    owner = world.session("owner")
    sibling = world.session("sibling")
    watch = declare(world, owner)
    event = world.emit(monitor=watch.id)
    assert recipients(world, event) == [owner]
    # A persistent monitor's event still reaches both leads.
    assert sorted(recipients(world, world.emit(monitor="build"))) == sorted([owner, sibling])


def test_a_watch_cancelled_before_the_insert_keeps_its_event_for_nobody(world: World) -> None:
    owner = world.session("owner")
    watch = declare(world, owner)
    with world.db.write() as conn:
        cancel_watch(conn, owner, watch.id, world.clock.now_ms())
    event = world.emit(monitor=watch.id)
    assert world.rows("SELECT id FROM monitor_events WHERE id = ?", event) == [{"id": event}]
    assert recipients(world, event) == []


def test_a_session_closed_before_the_insert_gets_nothing(world: World) -> None:
    owner = world.session("owner")
    watch = declare(world, owner)
    # The session stops being active while its watch row still says active (the
    # close's reap and the tick's insert in either order must give the same answer).
    with world.db.write() as conn:
        conn.execute("UPDATE agent_sessions SET status = 'dormant' WHERE id = ?", (owner,))
    event = world.emit(monitor=watch.id)
    assert recipients(world, event) == []


def test_a_watch_whose_session_became_a_subagent_delivers_nowhere(world: World) -> None:
    owner = world.session("owner")
    watch = declare(world, owner)
    world.session("owner", role="subagent")  # the host resumed it as a subagent
    event = world.emit(monitor=watch.id)
    assert recipients(world, event) == []

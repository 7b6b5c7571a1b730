"""The hook-state file: content, permissions, atomic replacement and when it is refreshed."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import iso_from_ms

from .conftest import SETTLE, START, World


def read_state(world: World, session: str) -> dict[str, Any]:
    path = world.service.get_session(session)["hookStatePath"]
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data


def test_open_writes_the_file_owner_only_with_exact_fields(world: World) -> None:
    session = world.session("abc")
    path = Path(world.workspace) / ".agentmonitors" / "sessions" / "abc" / "hook-state.json"
    text = path.read_text()
    assert json.loads(text) == {
        "sessionId": session,
        "updatedAt": iso_from_ms(START),
        "unread": {"low": 0, "normal": 0, "high": 0, "total": 0},
        "hasPendingHigh": False,
        "hasPendingNormal": False,
        "hasPendingLow": False,
        "latestHighTitles": [],
    }
    assert text.startswith('{\n  "sessionId": ')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not Path(f"{path}.tmp").exists()


def test_refresh_all_tracks_settling_claims_and_acks(world: World) -> None:
    session = world.session()
    other_workspace = world.session("other", workspace=str(world.root / "elsewhere"))
    world.emit("high", "Config drifted")
    world.emit("normal")
    world.service.refresh_all(world.workspace)
    state = read_state(world, session)
    assert state["unread"] == {"low": 0, "normal": 1, "high": 1, "total": 2}
    assert state["hasPendingHigh"] is False  # not settled yet
    assert state["hasPendingNormal"] is True
    assert state["latestHighTitles"] == ["Config drifted"]
    assert read_state(world, other_workspace)["unread"]["total"] == 0
    world.advance(SETTLE)
    world.service.refresh_all(world.workspace)
    state = read_state(world, session)
    assert state["hasPendingHigh"] is True
    assert state["updatedAt"] == iso_from_ms(START + SETTLE)
    world.service.claim(session, "turn-interruptible")  # high batch + folded reminder
    state = read_state(world, session)
    assert (state["hasPendingHigh"], state["hasPendingNormal"]) == (False, False)
    assert state["unread"]["total"] == 2
    world.service.ack(session)
    assert read_state(world, session)["unread"]["total"] == 0


def test_latest_high_titles_are_the_last_five_pending(world: World) -> None:
    session = world.session()
    for n in range(7):
        world.emit("high", f"h{n}", monitor=f"m{n}")
    world.service.refresh_all(world.workspace)
    assert read_state(world, session)["latestHighTitles"] == [f"h{n}" for n in range(2, 7)]


def test_reserve_release_and_close_refresh_the_file(world: World) -> None:
    session = world.session()
    world.emit("normal")
    world.service.refresh_all(world.workspace)
    reservation = world.service.reserve(session, "turn-interruptible")
    assert reservation is not None
    assert read_state(world, session)["hasPendingNormal"] is False
    world.service.release(reservation["reservationId"])
    assert read_state(world, session)["hasPendingNormal"] is True
    world.advance(2_000)
    world.service.close_session(session)
    assert read_state(world, session)["updatedAt"] == iso_from_ms(START + 2_000)


def test_a_planted_temp_symlink_is_replaced_not_followed(world: World) -> None:
    session = world.session()
    path = world.service.get_session(session)["hookStatePath"]
    victim = world.root / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, f"{path}.tmp")
    world.emit("normal")
    world.service.refresh_all(world.workspace)
    assert victim.read_text() == "keep me"
    assert read_state(world, session)["unread"]["normal"] == 1
    assert not os.path.lexists(f"{path}.tmp")


def test_an_unwritable_hook_state_path_never_fails_the_claim(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = world.root / "blocker"
    blocker.write_text("a file, not a folder")
    record = world.service.open_session(
        "h", workspace_path=world.workspace, hook_state_path=str(blocker / "hook-state.json")
    )
    world.emit("normal")
    claim = world.service.claim(record["id"], "turn-interruptible")
    assert claim is not None
    assert world.claimed_ids(record["id"]) == set(world.unread_ids(record["id"]))
    assert "could not refresh the hook state" in caplog.text


def test_end_of_tick_refresh_rewrites_only_when_the_state_changed(world: World) -> None:
    session = world.session()
    world.emit("normal")
    world.service.refresh_all(world.workspace)
    first = read_state(world, session)
    world.advance(1_000)
    world.service.refresh_all(world.workspace)  # nothing changed: file left alone
    assert read_state(world, session) == first
    world.emit("high")
    world.advance(1_000)
    world.service.refresh_all(world.workspace)
    changed = read_state(world, session)
    assert changed["unread"]["high"] == 1
    assert changed["updatedAt"] != first["updatedAt"]
    path = world.service.get_session(session)["hookStatePath"]
    os.unlink(path)  # a regenerable cache: deleting it is allowed
    world.service.refresh_all(world.workspace)
    assert read_state(world, session)["unread"]["high"] == 1

"""Sessions: register/resume, close, list, touch, Claude defaults, and who receives projections."""

from __future__ import annotations

import os

import pytest

from agentmonitors.clock import iso_from_ms
from agentmonitors.delivery.records import SessionNotFound
from agentmonitors.paths import default_hook_state_path, encode_host_session_id

from .conftest import START, World


def test_open_applies_claude_defaults_and_prints_the_record(world: World) -> None:
    record = world.service.open_session("abc", workspace_path=world.workspace)
    assert record == {
        "id": record["id"],
        "adapter": "claude-code",
        "hostSessionId": "abc",
        "agentIdentity": "abc",
        "role": "lead",
        "workspacePath": world.workspace,
        "hookStatePath": os.path.join(
            world.workspace, ".agentmonitors", "sessions", "abc", "hook-state.json"
        ),
        "status": "active",
        "baselineAt": iso_from_ms(START),
        "lastActiveAt": iso_from_ms(START),
        "createdAt": iso_from_ms(START),
        "updatedAt": iso_from_ms(START),
    }
    assert list(record) == [
        "id", "adapter", "hostSessionId", "agentIdentity", "role", "workspacePath",
        "hookStatePath", "status", "baselineAt", "lastActiveAt", "createdAt", "updatedAt",
    ]  # fmt: skip


def test_global_session_omits_workspace_and_defaults_hook_state_under_cwd(world: World) -> None:
    record = world.service.open_session("g")
    assert "workspacePath" not in record
    assert record["hookStatePath"] == default_hook_state_path("g", None)
    assert record["hookStatePath"].startswith(os.getcwd())


def test_resume_is_idempotent_and_keeps_the_baseline(world: World) -> None:
    first = world.service.open_session("abc", workspace_path=world.workspace, role="subagent")
    world.service.close_session(first["id"])
    world.advance(60_000)
    again = world.service.open_session(
        "abc", agent_identity="renamed", hook_state_path=str(world.root / "hs.json")
    )
    assert again["id"] == first["id"]
    assert again["baselineAt"] == first["baselineAt"] == iso_from_ms(START)
    assert again["lastActiveAt"] == again["updatedAt"] == iso_from_ms(START + 60_000)
    assert again["status"] == "active"
    assert "dormantAt" not in again
    # Omitted role and workspace keep the stored ones; identity and path are replaced.
    assert again["role"] == "subagent"
    assert again["workspacePath"] == world.workspace
    assert again["agentIdentity"] == "renamed"
    assert again["hookStatePath"] == str(world.root / "hs.json")
    assert len(world.service.list_sessions()) == 1
    # Another adapter with the same host id is another session.
    other = world.service.open_session("abc", adapter="codex")
    assert other["id"] != first["id"]


def test_close_goes_dormant_and_reaps_only_its_ephemeral_monitors(world: World) -> None:
    mine, theirs = world.session("a"), world.session("b")
    with world.db.write() as conn:
        for ident, owner in (("e1", mine), ("e2", theirs)):
            conn.execute(
                "INSERT INTO ephemeral_monitors (id, session_id, source_name, urgency,"
                " urgency_max, created_at, updated_at) VALUES (?, ?, 'file', 'normal', 'normal',"
                " 1, 1)",
                (ident, owner),
            )
    world.advance(5_000)
    closed = world.service.close_session(mine)
    assert closed["status"] == "dormant"
    assert closed["dormantAt"] == closed["lastActiveAt"] == iso_from_ms(START + 5_000)
    statuses = {
        row["id"]: (row["status"], row["reaped_at"])
        for row in world.rows("SELECT id, status, reaped_at FROM ephemeral_monitors")
    }
    assert statuses == {"e1": ("reaped", (START + 5_000) // 1000), "e2": ("active", None)}


def test_close_of_an_unknown_session_is_an_error(world: World) -> None:
    with pytest.raises(SessionNotFound, match=r"^Session not found: nope$"):
        world.service.close_session("nope")


def test_list_is_most_recently_updated_first(world: World) -> None:
    first = world.session("a")
    world.advance(1_000)
    second = world.session("b")
    assert [s["id"] for s in world.service.list_sessions()] == [second, first]
    world.advance(1_000)
    world.service.touch_session(first)
    assert [s["id"] for s in world.service.list_sessions()] == [first, second]


def test_claims_and_reserves_touch_the_session_even_when_nothing_is_delivered(
    world: World,
) -> None:
    session = world.session()
    world.advance(3_000)
    assert world.service.claim(session, "turn-interruptible") is None
    assert world.service.get_session(session)["lastActiveAt"] == iso_from_ms(START + 3_000)
    world.advance(3_000)
    assert world.service.reserve(session, "turn-idle") is None
    assert world.service.get_session(session)["lastActiveAt"] == iso_from_ms(START + 6_000)


@pytest.mark.parametrize(
    ("host", "encoded"),
    [
        ("abc-DEF_123", "abc-DEF_123"),
        ("a.b/c", "a~2eb~2fc"),
        ("..", "~2e~2e"),
        ("", "_empty"),
        ("x\U0001f600", "x~1f600"),
        ("\n", "~0a"),
    ],
)
def test_host_session_ids_are_encoded_into_one_safe_path_segment(host: str, encoded: str) -> None:
    assert encode_host_session_id(host) == encoded
    assert default_hook_state_path(host, "/w") == (
        f"/w/.agentmonitors/sessions/{encoded}/hook-state.json"
    )


def test_projection_reaches_lead_sessions_registered_before_the_event_only(world: World) -> None:
    lead = world.session("lead")
    subagent = world.session("sub", role="subagent")
    other_workspace = world.session("elsewhere", workspace=str(world.root / "other"))
    global_session = world.session("global", workspace=None)
    event = world.emit("high")
    late = world.session("late")
    recipients = {
        row["session_id"]
        for row in world.rows(
            "SELECT session_id FROM session_event_state WHERE event_id = ?", event
        )
    }
    assert recipients == {lead, global_session}
    assert subagent not in recipients and late not in recipients
    assert other_workspace not in recipients
    world.advance(20_000)
    assert world.service.claim(late, "post-compact") is None
    assert world.service.claim(subagent, "post-compact") is None


def test_subagent_sessions_never_get_a_claim_even_with_rows(world: World) -> None:
    subagent = world.session("sub", role="subagent")
    # Projected while it was a lead; once it is a subagent, claims stop.
    world.service.open_session("sub", role="lead")
    world.emit("high")
    world.service.open_session("sub", role="subagent")
    world.advance(20_000)
    for lifecycle in ("turn-interruptible", "turn-idle", "post-compact"):
        assert world.service.claim(subagent, lifecycle) is None
        assert world.service.reserve(subagent, lifecycle) is None
    assert world.service.preview(subagent) == []
    assert world.claimed_ids(subagent) == set()


def test_dormant_leads_keep_receiving_projections(world: World) -> None:
    session = world.session()
    world.service.close_session(session)
    event = world.emit("normal")
    assert world.unread_ids(session) == [event]

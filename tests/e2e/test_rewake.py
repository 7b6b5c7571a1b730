"""Headless wake with the real Claude Code: the plugin's asyncRewake Stop hook.

Plugin monitors are not armed in ``claude -p --input-format stream-json`` (the SDK's
mode), so the plugin's Stop hook ``agentmonitors hook rewake`` waits in the background for
the session's next delivery and exits 2 with it: Claude Code then opens a new model
request on its own, with the hook's stderr as its newest input. One process per test,
stdin kept open; after turn 1 nothing more is written to it until the session is closed.
A plain ``claude -p`` runs that hook synchronously: it must not hold the run up.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.transports.rewake import FRAME, REWAKE_MESSAGE, REWAKE_SUMMARY, SLOT_FILE
from agentmonitors.workspace import read_local_state
from tests.e2e.claude_code import ClaudeCode, StreamSession, run_print
from tests.e2e.fake_api import LoggedRequest
from tests.e2e.fake_messages_api import FakeMessagesApi
from tests.e2e.test_live_monitor import add_docs_monitor, created_at, new_input
from tests.e2e.test_real_claude_code import (  # noqa: F401  (fixtures are used by name)
    SETTLE_S,
    STORE_TIMEOUT_S,
    WATCHED,
    agentmonitors,
    assert_ok,
    claude_code,
    claude_env,
    daemon_session,
    fake_api,
    leak_check,
    wait_for_dormant,
    workspace,
)
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# How Claude Code 2.1.332 frames a rewake hook's stderr (docs/architecture.md, "Host
# adapters"): a task notification labelled with the hook's rewakeSummary, then its
# rewakeMessage and the text, all in its not-user-input wrapper.
LABEL = f"<summary>{REWAKE_SUMMARY}</summary>"
NOT_USER_INPUT = "NOT a message from the user"
MONITOR_ID = "checklist"
MONITOR_NAME = "Checklist changed"  # the monitor's `name`: its event's title
DOCS_NAME = "Docs changed"  # the normal monitor's (tests/e2e/test_live_monitor.py)
# Detection, the 15 s settle of a high event, one poll, Claude Code's turn start.
WAKE_TIMEOUT_S = STORE_TIMEOUT_S + SETTLE_S + 30.0


def rewake_processes(under: Path | None = None) -> list[int]:
    """Live ``agentmonitors hook rewake`` processes (the waiters); with ``under``, only
    those running in that folder (another test's session may wait beside this one)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                cwd = os.readlink(entry / "cwd") if under is not None else ""
            except OSError:
                continue
            if b"\0hook\0rewake" not in cmdline:
                continue
            if under is None or Path(cwd).is_relative_to(under.resolve()):
                found.append(int(entry.name))
    return found


def waiter_pids(project: Path, host_session_id: str) -> list[int]:
    """The session's waiting ``hook rewake``: the pid it wrote, while that process lives."""
    slot = project / ".agentmonitors" / "sessions" / host_session_id / SLOT_FILE
    try:
        pid = int(slot.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return []
    return [pid] if pid in rewake_processes() else []


def woken_with(api: FakeMessagesApi, since: int, needle: str) -> list[LoggedRequest]:
    """Messages requests from ``since`` on whose newest input holds ``needle``."""
    return [r for r in api.messages_requests(since=since) if needle in new_input(r)]


def states(project: Path, env: dict[str, str], session_id: str) -> dict[str, str]:
    listed = agentmonitors(
        project, env, "events", "list", "--session", session_id, "--format", "json"
    )
    return {event["id"]: event["deliveryState"] for event in json.loads(listed.stdout)}


def stored(
    project: Path, env: dict[str, str], session_id: str, before: set[str], name: str
) -> dict[str, Any]:
    """The first event not in ``before`` that names ``name``, once the daemon stored it.
    (A high change is stored when its 15 s settle ends, stamped with when it was seen.)"""

    def new_event() -> dict[str, Any] | None:
        listed = agentmonitors(
            project, env, "events", "list", "--session", session_id, "--format", "json"
        )
        fresh = [e for e in json.loads(listed.stdout) if e["id"] not in before and name in str(e)]
        return fresh[0] if fresh else None

    event: dict[str, Any] = wait_for(new_event, timeout=STORE_TIMEOUT_S + SETTLE_S, step=0.3)
    return event


def woken_by(api: FakeMessagesApi, since: int, event: dict[str, Any]) -> LoggedRequest:
    """The first request from ``since`` on whose newest input holds ``event``."""
    found: list[LoggedRequest] = wait_for(
        lambda: woken_with(api, since, event["id"]), timeout=WAKE_TIMEOUT_S, step=0.05
    )
    return found[0]


def test_an_idle_headless_session_is_woken_by_each_change_once(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Two changes while the session is idle: a high one, whose wake comes once its 15 s
    settle ends, and inside that window a normal one, which wakes the session at once.
    Each woken turn's Stop arms the next wait."""
    add_docs_monitor(workspace)
    session = StreamSession(
        claude_code,
        workspace,
        claude_env,
        str(uuid.uuid4()),
        tmp_path / "claude-stderr.txt",
        extra_args=["--strict-mcp-config"],
        stdout_path=tmp_path / "claude-stdout.jsonl",
        request_mark=fake_api.mark,
    )
    figures: dict[str, float] = {}
    with session:
        first = session.send("hello")
        assert_ok(first, session)
        record = daemon_session(workspace, claude_env, session.session_id)
        socket = read_local_state(str(workspace)).socket
        assert socket, "the SessionStart hook did not start a daemon"
        # Turn 1's Stop started the background wait.
        wait_for(lambda: waiter_pids(workspace, session.session_id), timeout=30, step=0.1)

        mark = fake_api.mark()
        before = set(states(workspace, claude_env, record["id"]))
        high_written = time.time()
        (workspace / "notes" / WATCHED).write_text(
            "- tag the release\n- rotate the signing key first\n", encoding="utf-8"
        )
        normal_written = time.time()
        (workspace / "docs" / "guide.md").write_text("second\n", encoding="utf-8")
        normal = stored(workspace, claude_env, record["id"], before, "guide.md")
        normal_request = woken_by(fake_api, mark, normal)
        figures["normalWriteToRequestS"] = normal_request.time - normal_written
        # The woken turn's Stop arms the next wait.
        wait_for(lambda: waiter_pids(workspace, session.session_id), timeout=30, step=0.1)
        high = stored(workspace, claude_env, record["id"], before, WATCHED)
        high_request = woken_by(fake_api, mark, high)
        settled = created_at(high, high_written) + SETTLE_S
        figures["highWriteToRequestS"] = high_request.time - high_written
        figures["highSettleEndToRequestS"] = high_request.time - settled
        wait_for(lambda: waiter_pids(workspace, session.session_id), timeout=30, step=0.1)
        turns_sent = len(session.turns)
        all_requests = fake_api.messages_requests(since=first.first_request)
    wait_for_dormant(workspace, claude_env, session.session_id)

    print(
        "\nrewake: file write -> model request "
        + ", ".join(f"{name} {value:.2f}s" for name, value in figures.items())
    )
    (tmp_path / "rewake-latency.json").write_text(json.dumps(figures), encoding="utf-8")

    # No user turn: only "hello" was written to Claude Code's stdin.
    assert turns_sent == 1
    woken = [
        (normal, normal_request, f"[normal] docs: {DOCS_NAME}"),
        (high, high_request, f"[high] {MONITOR_ID}: {MONITOR_NAME}"),
    ]
    for event, request, named in woken:
        newest = new_input(request)
        # What the model receives: our framing under the default label, the monitor (its
        # id and name), the change's urgency and id, and the command that acknowledges it.
        assert LABEL in newest and NOT_USER_INPUT in newest, newest
        assert f"{REWAKE_MESSAGE} {FRAME.strip()}" in newest, newest
        assert "Stop hook blocking error" not in newest, newest
        assert named in newest, newest
        assert event["id"] in newest and event["title"] == named.split(": ", 1)[1], (event, newest)
        assert f"agentmonitors events ack --session {record['id']}" in newest, newest
        assert "hello" not in newest
    # Each change woke the session exactly once: no later request has it as new input,
    # and the normal one did not wait for the high one to settle.
    for event, _request, _named in woken:
        carrying = [r for r in all_requests if event["id"] in new_input(r)]
        assert len(carrying) == 1, [new_input(r) for r in carrying]
    assert high["id"] not in new_input(normal_request)
    assert normal_request.index < high_request.index
    assert FRAME.strip() not in new_input(all_requests[0])
    assert states(workspace, claude_env, record["id"]) == {
        high["id"]: "claimed",
        normal["id"]: "claimed",
    }


def test_a_plain_print_run_is_not_held_up_by_the_rewake_hook(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
) -> None:
    """``claude -p`` runs the Stop hook synchronously and cannot be woken: the hook sees
    the host's command line and ends at once, so the run ends as quickly as it would
    without it, and no waiter is left behind."""
    run = run_print(claude_code, "hello", cwd=workspace, env=claude_env, timeout=60)
    assert run.returncode == 0, run.describe()
    assert run.result.get("result") == "ok", run.describe()
    print(f"\nrewake: plain claude -p with the plugin took {run.seconds:.2f}s")
    assert run.seconds < 30, run.describe()
    assert not rewake_processes(under=workspace)

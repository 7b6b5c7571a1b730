"""Turn-idle with the real Claude Code: a low-urgency change rides the Stop hook.

One ``claude -p`` stream-json process runs three turns. Between turns 1 and 2 a
low-urgency monitor records a change. Turn 2's prompt delivers nothing (low waits for the
turn's end); its Stop hook injects the reminder and Claude Code asks the model once more
with that text. The fake model then does what the reminder says (acknowledges, in a Bash
call) and, while that call runs, the watched file changes again; the second Stop carries
``stop_hook_active`` and must inject nothing although a fresh low change is pending, so the
turn ends. Turn 3's Stop then delivers that change: the guard, not an empty queue, is what
ended turn 2.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.claude_code import ClaudeCode, StreamSession, Turn
from tests.e2e.fake_messages_api import FakeMessagesApi, LoggedRequest, ToolCall
from tests.e2e.test_real_claude_code import (  # noqa: F401  (fixtures are used by name)
    agentmonitors,
    assert_ok,
    claude_code,
    claude_env,
    daemon_session,
    fake_api,
    hooks_only,
    leak_check,
    wait_for_dormant,
    workspace,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LOW_FILE = "style-guide.md"
LOW_MONITOR = """---
name: Style guide changed
watch:
  type: file-fingerprint
  globs: "guides/*.md"
urgency: low
---
The style guide changed; look at it when you are done.
"""
# How Claude Code 2.1.332 hands a Stop hook's additionalContext to the model:
# observed as user text inside a <system-reminder> of the continuation request.
STOP_DELIVERED = "Stop hook additional context: AgentMon: Monitored changes are pending."
STORE_TIMEOUT_S = 60.0
# A second Stop hook, from the project's settings, that keeps each Stop payload Claude
# Code sends (one JSON line each) and says so on stderr so its runs can be told apart.
RECORDED = "stop payload recorded"


def record_stop_payloads(project: Path, log: Path) -> None:
    command = f"cat >> '{log}' && echo >> '{log}' && echo '{RECORDED}' >&2"
    hook = {"type": "command", "command": command}
    settings = {"hooks": {"Stop": [{"matcher": "", "hooks": [hook]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def stop_payloads(log: Path) -> list[dict[str, Any]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def unread_low(cwd: Path, env: Mapping[str, str], session_id: str) -> list[dict[str, Any]]:
    listed = agentmonitors(
        cwd,
        env,
        *("events", "list", "--session", session_id, "--unread", "--urgency", "low"),
        *("--format", "json"),
    )
    events: list[dict[str, Any]] = json.loads(listed.stdout)
    return events


def wait_for_unread_low(
    cwd: Path, env: Mapping[str, str], session_id: str, exclude: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Poll until the daemon holds an unread low event of ``LOW_FILE`` not in ``exclude``."""
    deadline = time.monotonic() + STORE_TIMEOUT_S
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        events = unread_low(cwd, env, session_id)
        fresh = [e for e in events if e["id"] not in exclude and LOW_FILE in json.dumps(e)]
        if fresh:
            return fresh[0]
        time.sleep(0.2)
    pytest.fail(f"no new low event for {LOW_FILE} within {STORE_TIMEOUT_S}s: {events}")


def turn_requests(api: FakeMessagesApi, turn: Turn, end: int | None = None) -> list[LoggedRequest]:
    """The Messages requests of one turn (they all carry its prompt in the history)."""
    return [
        r
        for r in api.messages_requests(since=turn.first_request)
        if (end is None or r.index < end) and turn.prompt in r.raw
    ]


def stop_contexts(turn: Turn) -> list[str | None]:
    """Per Stop of the turn: the additionalContext ``hook deliver`` printed, or None.

    Each Stop also runs the recorder and, in the background, the plugin's ``hook rewake``,
    which under ``live: off`` ends at once with nothing printed: its response looks like an
    empty ``hook deliver``'s and may land before or after the turn's result. ``hook
    deliver`` runs once per Stop (the recorder counts them), so the surplus empty responses
    are dropped, the earliest first: here a Stop's context never follows an empty one.
    """
    responses = turn.hook_responses("Stop")
    stops = sum(RECORDED in hook["stderr"] for hook in responses)
    found: list[str | None] = []
    for hook in responses:
        if RECORDED in hook["stderr"]:
            continue
        assert hook["exit_code"] == 0 and hook["outcome"] == "success", hook
        found.append(
            json.loads(hook["stdout"])["hookSpecificOutput"]["additionalContext"]
            if hook["stdout"]
            else None
        )
    for _ in range(len(found) - stops):
        assert None in found, found
        found.remove(None)
    return found


def test_low_change_reaches_the_model_once_at_the_end_of_a_turn(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
    tmp_path: Path,
) -> None:
    guide = workspace / "guides" / LOW_FILE
    guide.parent.mkdir()
    guide.write_text("- tabs\n", encoding="utf-8")
    monitor = workspace / ".claude" / "monitors" / "style" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(LOW_MONITOR, encoding="utf-8")
    agentmonitors(workspace, claude_env, "validate")
    hooks_only(workspace)  # the low changes wait for the turns' Stop hooks
    payload_log = tmp_path / "stop-payloads.jsonl"
    record_stop_payloads(workspace, payload_log)

    session = StreamSession(
        claude_code,
        workspace,
        claude_env,
        str(uuid.uuid4()),
        tmp_path / "claude-stderr.txt",
        extra_args=["--strict-mcp-config", "--allowedTools", "Bash"],
        stdout_path=tmp_path / "claude-stdout.jsonl",
        request_mark=fake_api.mark,
    )
    started, ready = tmp_path / "ack-done", tmp_path / "second-change-stored"
    failures: list[BaseException] = []
    second_event: dict[str, Any] = {}

    def change_again(record: dict[str, Any], first_id: str) -> None:
        """While the model's Bash call runs: a second low change, stored before Stop 2."""
        try:
            deadline = time.monotonic() + 60
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert started.exists(), "the model's Bash call never ran"
            guide.write_text("- spaces, two\n", encoding="utf-8")
            second_event.update(
                wait_for_unread_low(workspace, claude_env, record["id"], frozenset({first_id}))
            )
        except BaseException as error:  # reported by the test thread
            failures.append(error)
        finally:
            ready.touch()

    with session:
        first = session.send("hello")
        assert_ok(first, session)
        record = daemon_session(workspace, claude_env, session.session_id)

        changed = time.monotonic()
        guide.write_text("- spaces, four\n", encoding="utf-8")
        first_event = wait_for_unread_low(workspace, claude_env, record["id"])
        print(f"low event stored {time.monotonic() - changed:.2f}s after the change")

        # The continuation's answer: acknowledge as the reminder says, then hold the tool
        # call open until the second change is stored, so Stop 2 has something pending.
        ack = f"agentmonitors events ack --session {record['id']}"
        fake_api.script_tool_call(
            ToolCall(
                trigger=STOP_DELIVERED,
                name="Bash",
                input={
                    "command": f"{ack} && touch {started} && "
                    f"while [ ! -e {ready} ]; do sleep 0.05; done",
                    "description": "Acknowledge monitored changes",
                    "timeout": 120_000,
                },
            )
        )
        helper = threading.Thread(
            target=change_again, args=(record, first_event["id"]), daemon=True
        )
        helper.start()
        second = session.send("again")
        helper.join(timeout=70)
        assert not failures, failures
        assert_ok(second, session)

        third = session.send("and now")
        assert_ok(third, session)
    wait_for_dormant(workspace, claude_env, session.session_id)

    # Claude Code's own view of the five Stops: only the one after a continuation is active.
    active = [p["stop_hook_active"] for p in stop_payloads(payload_log)]
    assert active == [False, False, True, False, True], active

    # Turn 1: nothing pending, its Stop printed nothing and no continuation happened.
    assert stop_contexts(first) == [None]
    assert len(turn_requests(fake_api, first, end=second.first_request)) == 1

    # Turn 2: the prompt, ONE Stop continuation, the Bash result; then the turn ended.
    [prompt_hook] = second.hook_responses("UserPromptSubmit")
    assert prompt_hook["stdout"] == "", "low urgency must wait for the end of the turn"
    contexts = stop_contexts(second)
    assert len(contexts) == 2, contexts
    assert contexts[0] is not None and contexts[0].startswith("AgentMon: Monitored changes")
    assert contexts[1] is None, "the Stop after a Stop continuation must inject nothing"
    requests = turn_requests(fake_api, second, end=third.first_request)
    assert len(requests) == 3, [r.index for r in requests]
    before, continuation, tool_result = requests
    assert STOP_DELIVERED not in before.raw
    assert continuation.raw.count(STOP_DELIVERED) == 1, "exactly one continuation"
    assert contexts[0] in continuation.raw.replace("\\n", "\n")
    assert '"tool_result"' in tool_result.raw
    assert tool_result.raw.count(STOP_DELIVERED) == 1, "no second continuation"
    # Pending at Stop 2 all the same: the guard held it, not an empty queue.
    assert second_event, "the second change was not stored during the Bash call"

    # Turn 3: that change is delivered at its own end of turn, once.
    assert stop_contexts(third)[0] is not None and stop_contexts(third)[1:] == [None]
    last = turn_requests(fake_api, third)
    assert len(last) == 2, [r.index for r in last]
    assert last[0].raw.count(STOP_DELIVERED) == 1  # turn 2's, in the history
    assert last[1].raw.count(STOP_DELIVERED) == 2
    events = {e["id"]: e for e in unread_low(workspace, claude_env, record["id"])}
    assert first_event["id"] not in events, "the model's ack did not reach the daemon"
    assert events[second_event["id"]]["deliveryState"] == "claimed", events

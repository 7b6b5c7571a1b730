"""Live delivery with the real Claude Code: ``events follow`` under the built-in Monitor tool.

One ``claude -p`` stream-json process per test. Turn 1 opens the session; in turn 2 the
fake model starts a Monitor running ``agentmonitors events follow --session <id>`` and
the turn ends. Then the watched file changes and the settled event becomes one line on
follow's stdout:

- while the session is idle, Claude Code opens a new model request on its own, with the
  line in a ``<task-notification>``; that turn runs the UserPromptSubmit hook with the
  notification as its prompt, and the hook must not surface the event again;
- while a tool runs, the line waits for the tool and rides the request that carries its
  result; its UserPromptSubmit runs only then, after the tool's PostToolUse hook. That is
  why follow commits when the line is written instead of waiting for that hook as proof
  (as channel pushes do): the proof can come as late as the longest tool call, a lease
  would lapse meanwhile, and PostToolUse would show the event again in the same request.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.follow_line import follow_line
from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.transports.follow import already_followed_line
from agentmonitors.workspace import read_local_state
from tests.e2e.claude_code import ClaudeCode, StreamSession, Turn, processes_mentioning
from tests.e2e.fake_messages_api import FakeMessagesApi, LoggedRequest, ToolCall
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
    wait_for_stored_event,
    workspace,
)
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LIVE_PROMPT = "start live updates"
AGAIN_PROMPT = "start live updates again"
BUSY_PROMPT = "run the build"
DESCRIPTION = "AgentMon live updates"
NOTIFICATION = "<task-notification>"
# A second UserPromptSubmit hook, from the project's settings, that keeps each payload
# Claude Code sends (one JSON line each) and says so on stderr, so its runs can be told
# apart from the plugin's.
RECORDED = "prompt payload recorded"
PROMPT_DELIVERED = "UserPromptSubmit hook additional context"
# Detection, the 15 s settle, one follow poll, Claude Code's ~0.3 s: generous on a
# loaded machine, since each step is waited for as a condition, never slept.
LINE_TIMEOUT_S = STORE_TIMEOUT_S + SETTLE_S + 60.0
EVENT_LINE = re.compile(r"<event>(.*?)</event>", re.DOTALL)


def record_prompt_payloads(project: Path, log: Path) -> None:
    command = f"cat >> '{log}' && echo >> '{log}' && echo '{RECORDED}' >&2"
    hook = {"type": "command", "command": command}
    settings = {"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def prompt_payloads(log: Path) -> list[dict[str, Any]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def follow_heartbeats(session_id: str) -> list[dict[str, Any]]:
    return [
        dict(record)
        for record in read_records()
        if record.get("transport") == "follow" and record.get("sessionId") == session_id
    ]


def notification_with(api: FakeMessagesApi, since: int, needle: str) -> LoggedRequest | None:
    """The first Messages request from ``since`` on that holds a notification with ``needle``."""
    for request in api.messages_requests(since=since):
        if NOTIFICATION in request.raw and needle in request.raw:
            return request
    return None


def new_input(request: LoggedRequest) -> str:
    """The text of every message after the request's last assistant message."""
    messages = request.body["messages"]
    answered = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    parts: list[str] = []
    for message in messages[answered + 1 :]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            parts.append(block["text"] if block.get("type") == "text" else json.dumps(block))
    return "\n".join(parts)


def tool_results(turn: Turn) -> list[str]:
    return [
        json.dumps(block.get("content"))
        for event in turn.events
        if event.get("type") == "user"
        for block in event.get("message", {}).get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def plugin_hooks(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The plugin's runs of hook ``name`` (the payload recorder's are left out)."""
    return [
        event
        for event in events
        if event.get("subtype") == "hook_response"
        and event.get("hook_event") == name
        and RECORDED not in event.get("stderr", "")
    ]


def follow_pids(session_id: str) -> list[int]:
    """The ``events follow`` processes of the session: the Python process, not its shell.

    Claude Code runs the Monitor command through a shell whose argv holds the whole
    command line as one argument; the follow process has ``events``, ``follow`` and the
    session id as arguments of their own.
    """
    pids: list[int] = []
    for pid, _command in processes_mentioning(session_id):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [arg.decode(errors="replace") for arg in argv]
        if "follow" in words and session_id in words and "events" in words:
            pids.append(pid)
    return pids


def stop_follow(session_id: str) -> None:
    """SIGTERM the Monitor's ``events follow`` (ours: started by this test's Claude Code)."""
    pids = follow_pids(session_id)
    assert pids, "no events follow process is running"
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


@dataclass
class Live:
    """A Claude Code session whose Monitor runs ``events follow``."""

    session: StreamSession
    session_id: str  # AgentMon's id of the session
    socket: str
    payload_log: Path
    ended: LoggedRequest | None = None  # the Monitor's last notification, once stopped

    def expected_line(self, event: dict[str, Any]) -> str:
        """The line follow prints for ``event`` alone (nothing coalesced with it)."""
        summary = {key: event[key] for key in ("monitorId", "urgency", "title")}
        claim = {"sessionId": self.session_id, "events": [{"eventId": event["id"], **summary}]}
        return follow_line(claim, self.socket)

    def output_holds(self, needle: str) -> bool:
        """Claude Code has read ``needle`` from the Monitor (it keeps each task's output)."""
        return any(needle in text for text in self.task_outputs())

    def task_outputs(self) -> list[str]:
        """What each of the session's background tasks has written, as Claude Code kept it."""
        pattern = f"claude-*/*/{self.session.session_id}/tasks/*.output"
        texts: list[str] = []
        for path in Path(tempfile.gettempdir()).glob(pattern):
            with contextlib.suppress(OSError):
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
        return texts


@contextlib.contextmanager
def live_session(
    claude: ClaudeCode,
    project: Path,
    env: dict[str, str],
    api: FakeMessagesApi,
    tmp_path: Path,
    allowed_tools: str = "Monitor",
) -> Iterator[Live]:
    """Turn 1, then turn 2 starts the Monitor; on exit follow is stopped and the session ends."""
    payload_log = tmp_path / "prompt-payloads.jsonl"
    record_prompt_payloads(project, payload_log)
    session = StreamSession(
        claude,
        project,
        env,
        str(uuid.uuid4()),
        tmp_path / "claude-stderr.txt",
        extra_args=["--strict-mcp-config", "--allowedTools", allowed_tools],
        stdout_path=tmp_path / "claude-stdout.jsonl",
        request_mark=api.mark,
    )
    with session:
        first = session.send("hello")
        assert_ok(first, session)
        record = daemon_session(project, env, session.session_id)
        socket = read_local_state(str(project)).socket
        assert socket, "the SessionStart hook did not start a daemon"
        command = f"agentmonitors events follow --session {record['id']}"
        api.script_tool_call(
            ToolCall(
                trigger=LIVE_PROMPT,
                name="Monitor",
                input={"description": DESCRIPTION, "timeout_ms": 900_000, "command": command},
            )
        )
        second = session.send(LIVE_PROMPT)
        assert_ok(second, session)
        assert any("Monitor started" in text for text in tool_results(second)), session.describe()
        # follow is running and has reached the daemon (its heartbeat says so).
        wait_for(lambda: follow_heartbeats(record["id"]), timeout=60, step=0.2)
        live = Live(session, record["id"], socket, payload_log)
        yield live

        mark = api.mark()
        stop_follow(live.session_id)
        wait_for(lambda: not follow_heartbeats(live.session_id), timeout=30, step=0.2)
        # The Monitor reports the end of its command in one more request, with no user turn.
        live.ended = wait_for(lambda: notification_with(api, mark, "<status>"), timeout=60)
    wait_for_dormant(project, env, session.session_id)
    # follow stopped cleanly on SIGTERM (exit 0), which Claude Code reports as such.
    assert live.ended is not None
    assert "<status>completed</status>" in new_input(live.ended), live.ended.raw[-2000:]


def created_at(event: dict[str, Any], fallback: float) -> float:
    try:
        return datetime.fromisoformat(event["createdAt"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return fallback


def event_lines(text: str) -> list[str]:
    return [match.group(1).strip() for match in EVENT_LINE.finditer(text)]


def test_a_line_written_while_a_tool_runs_waits_for_the_tool_and_no_hook_repeats_it(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The line reaches the model only once the tool ends, after PostToolUse has run.

    So the notification's UserPromptSubmit (the would-be proof) can come any time after
    the write, as late as the longest tool call, and always after that call's PostToolUse
    hook. Waiting for it, a lease would lapse under any long tool call and that hook would
    show the event again, in the very request that carries the line: committing on write
    is what keeps one delivery one message. The change is a normal one: the hooks would
    surface it as well (its reminder at PostToolUse or the prompt), and its line is
    written at once instead of after a high change's 15 s settle.
    """
    add_docs_monitor(workspace)
    started, ready = tmp_path / "tool-started", tmp_path / "tool-may-end"
    fake_api.script_tool_call(
        ToolCall(
            trigger=BUSY_PROMPT,
            name="Bash",
            input={
                "command": f"touch {started} && while [ ! -e {ready} ]; do sleep 0.05; done",
                "description": "Run the build",
                "timeout": 300_000,
            },
        )
    )
    failures: list[BaseException] = []
    found: dict[str, Any] = {}
    read: list[float] = []

    with live_session(
        claude_code, workspace, claude_env, fake_api, tmp_path, "Monitor,Bash"
    ) as live:

        def change_while_the_tool_runs() -> None:
            try:
                wait_for(started.exists, timeout=60, step=0.05)
                (workspace / "docs" / "guide.md").write_text("ship it\n", encoding="utf-8")
                event = wait_for_stored_event(workspace, claude_env, live.session_id, "guide.md")
                assert event["urgency"] == "normal", event
                found.update(event)
                # Claude Code has read the line before the tool may end.
                try:
                    wait_for(lambda: live.output_holds(event["id"]), timeout=LINE_TIMEOUT_S)
                except AssertionError:
                    raise AssertionError(
                        "Claude Code never kept the line in its task output "
                        f"({tempfile.gettempdir()}/claude-*/*/<session>/tasks/*.output)"
                    ) from None
                read.append(time.time())
                # Claude Code batches a Monitor's lines for ~0.3 s after reading them:
                # a tool that ends later than that carries the line in its result.
                time.sleep(2.0)
            except BaseException as error:  # reported by the test thread
                failures.append(error)
            finally:
                ready.touch()

        helper = threading.Thread(target=change_while_the_tool_runs, daemon=True)
        helper.start()
        busy = live.session.send(BUSY_PROMPT, timeout=LINE_TIMEOUT_S + 120)
        helper.join(timeout=30)
        assert not failures, failures
        assert_ok(busy, live.session)
        after = fake_api.mark()

    event = found
    carrying = [r for r in fake_api.messages_requests() if event["id"] in r.raw]
    assert carrying, "the line never reached the model"
    first = carrying[0]
    assert first.index >= busy.first_request
    assert first.time > read[0], "the model saw the line before the tool ended"
    newest = new_input(first)
    assert NOTIFICATION in newest and event_lines(newest) == [live.expected_line(event)], newest
    assert first.raw.count(event["id"]) == 1, first.raw
    # Usually it rides the request that returns the tool's result; when the tool ends
    # within Claude Code's own short batching of Monitor lines, it comes right after
    # the turn instead. Either way, after the tool.
    rode_the_result = first.index < after
    print(f"\nlive: the line rode {'the tool result' if rode_the_result else 'a turn of its own'}")
    if rode_the_result:
        assert '"tool_result"' in newest, newest

    # Its UserPromptSubmit ran after the tool's PostToolUse ...
    prompts = [p.get("prompt", "") for p in prompt_payloads(live.payload_log)]
    assert prompts[2] == BUSY_PROMPT and event["id"] in prompts[3], prompts
    responses = [e for e in live.session.all_events if e.get("subtype") == "hook_response"]
    recorded = [
        i
        for i, e in enumerate(responses)
        if e.get("hook_event") == "UserPromptSubmit" and RECORDED in e.get("stderr", "")
    ]
    post_tool = [i for i, e in enumerate(responses) if e.get("hook_name") == "PostToolUse:Bash"]
    assert len(post_tool) == 1 and recorded[3] > post_tool[0], responses
    # ... and no hook of the session surfaced the event again.
    for name in ("UserPromptSubmit", "PostToolUse", "Stop"):
        hooks = plugin_hooks(live.session.all_events, name)
        assert all(hook["exit_code"] == 0 and hook["stdout"] == "" for hook in hooks), hooks
    assert states(workspace, claude_env, live.session_id) == {event["id"]: "claimed"}


def states(project: Path, env: dict[str, str], session_id: str) -> dict[str, str]:
    listed = agentmonitors(
        project, env, "events", "list", "--session", session_id, "--format", "json"
    )
    return {event["id"]: event["deliveryState"] for event in json.loads(listed.stdout)}


DOCS = """---
name: Docs changed
watch:
  type: file-fingerprint
  globs: "docs/*.md"
urgency: normal
---
Read the changed page.
"""


def add_docs_monitor(project: Path) -> None:
    """A normal monitor on ``docs/*.md``: no settle window, so its line comes at once."""
    monitor = project / ".claude" / "monitors" / "docs" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(DOCS, encoding="utf-8")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("first\n", encoding="utf-8")


def change_and_wait_for_its_line(
    live: Live, api: FakeMessagesApi, project: Path, env: dict[str, str], text: str
) -> tuple[str, LoggedRequest]:
    """Rewrite the docs page; its new event's id and the request whose notification holds it."""
    mark = api.mark()
    before = set(states(project, env, live.session_id))
    (project / "docs" / "guide.md").write_text(text, encoding="utf-8")

    def stored() -> str | None:
        listed = agentmonitors(
            project, env, "events", "list", "--session", live.session_id, "--format", "json"
        )
        events = json.loads(listed.stdout)
        new = [e["id"] for e in events if e["id"] not in before and e["monitorId"] == "docs"]
        return new[0] if len(new) == 1 else None

    event_id: str = wait_for(stored, timeout=STORE_TIMEOUT_S, step=0.3)
    request: LoggedRequest = wait_for(
        lambda: notification_with(api, mark, event_id), timeout=LINE_TIMEOUT_S, step=0.05
    )
    return event_id, request


def test_each_change_while_idle_wakes_the_model_once_naming_its_monitor(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
    tmp_path: Path,
) -> None:
    """One idle session, three changes, no prompt typed: a high one (its line comes once
    its 15 s settle ends) and, inside that window, two normal ones, each named at once
    (issue 27, point 2: not "changes are pending"; the second wakes the session again
    though the first is unacknowledged). Then the agent starts a second follower of the
    session: it attaches to nothing and says so in one line."""
    add_docs_monitor(workspace)
    seen: list[str] = []
    with live_session(claude_code, workspace, claude_env, fake_api, tmp_path) as live:
        idle_mark = fake_api.mark()
        written_at = time.time()
        (workspace / "notes" / WATCHED).write_text(
            "- tag the release\n- rotate the signing key first\n", encoding="utf-8"
        )
        # While the high change settles (it is stored when its 15 s settle ends, stamped
        # with when it was seen), each normal change wakes the session at once.
        for text in ("second\n", "third\n"):
            event_id, woken = change_and_wait_for_its_line(
                live, fake_api, workspace, claude_env, text
            )
            docs = {"id": event_id, "monitorId": "docs", "urgency": "normal"}
            named = live.expected_line({**docs, "title": "Docs changed"})
            assert named.startswith("AgentMon: [normal] docs: Docs changed. Ack when handled: ")
            assert event_lines(new_input(woken)) == [named], new_input(woken)
            # The request holds the whole conversation: its new input names the new one only.
            assert all(old not in new_input(woken) for old in seen), "named twice"
            assert "[high]" not in new_input(woken), "the high change is not settled yet"
            seen.append(event_id)
        event = wait_for_stored_event(workspace, claude_env, live.session_id, WATCHED)
        assert event["urgency"] == "high", event
        request = wait_for(
            lambda: notification_with(fake_api, idle_mark, event["id"]),
            timeout=LINE_TIMEOUT_S,
            step=0.05,
        )
        turns_sent = len(live.session.turns)
        second_follower = start_a_second_follower(live, fake_api)
    latency = request.time - written_at
    settled = created_at(event, written_at) + SETTLE_S
    print(
        f"\nlive: file write -> task-notification request {latency:.2f}s "
        f"({request.time - settled:.2f}s after the {SETTLE_S:.0f}s settle ended)"
    )
    (tmp_path / "live-latency.json").write_text(
        json.dumps({"writeToRequestS": latency, "settleEndToRequestS": request.time - settled}),
        encoding="utf-8",
    )

    # No user turn: the only prompts written to Claude Code are turns 1 and 2, and the
    # request came after turn 2 had ended, with a notification as its newest input.
    assert turns_sent == 2
    newest = new_input(request)
    assert NOTIFICATION in newest and DESCRIPTION in newest, newest
    assert LIVE_PROMPT not in newest and "hello" not in newest
    # The exact line follow printed, once, naming the monitor and its name (the title).
    expected = live.expected_line(event)
    assert event_lines(newest) == [expected], (expected, newest)
    assert expected.startswith("AgentMon: [high] checklist: Checklist changed. Ack when handled: ")
    assert all(old not in newest for old in seen), "a normal change named twice"

    # The UserPromptSubmit hook fired for that notification turn ...
    payloads = prompt_payloads(live.payload_log)
    notified = [p for p in payloads if event["id"] in p.get("prompt", "")]
    assert len(notified) == 1, [p.get("prompt") for p in payloads]
    assert notified[0]["prompt"].startswith(NOTIFICATION), notified[0]["prompt"]
    assert event_lines(notified[0]["prompt"]) == [expected]
    # ... and surfaced nothing, nor did any other: each line had delivered its event
    # (committed on write), so the hooks' reminder stayed quiet too.
    hooks = plugin_hooks(live.session.all_events, "UserPromptSubmit")
    assert len(hooks) == len(payloads), (hooks, payloads)
    assert all(hook["exit_code"] == 0 and hook["stdout"] == "" for hook in hooks), hooks
    # Nor did a notification turn's end: no Stop continuation repeated one.
    stops = plugin_hooks(live.session.all_events, "Stop")
    assert all(hook["exit_code"] == 0 and hook["stdout"] == "" for hook in stops), stops
    assert PROMPT_DELIVERED not in request.raw
    assert request.raw.count(event["id"]) == 1, request.raw
    assert states(workspace, claude_env, live.session_id) == dict.fromkeys(
        [event["id"], *seen], "claimed"
    )
    # The second follower said why it stopped, once.
    assert already_followed_line(live.session_id) in new_input(second_follower)


def start_a_second_follower(live: Live, api: FakeMessagesApi) -> LoggedRequest:
    """The agent starts another Monitor on ``events follow`` for the same session: the
    request that brings its one line back; the first follower keeps running."""
    first = follow_pids(live.session_id)
    assert len(first) == 1, first
    command = f"agentmonitors events follow --session {live.session_id}"
    api.script_tool_call(
        ToolCall(
            trigger=AGAIN_PROMPT,
            name="Monitor",
            input={"description": DESCRIPTION, "timeout_ms": 900_000, "command": command},
        )
    )
    mark = api.mark()
    again = live.session.send(AGAIN_PROMPT)
    assert_ok(again, live.session)
    line = already_followed_line(live.session_id)

    def brought_back() -> LoggedRequest | None:
        found = [r for r in api.messages_requests(since=mark) if line in new_input(r)]
        return found[0] if found else None

    request: LoggedRequest = wait_for(brought_back, timeout=60)
    assert new_input(request).count(line) == 1, new_input(request)
    # All it wrote on stdout is that one line (Claude Code keeps each task's output,
    # its stderr and exit status marked as such).
    [output] = [text for text in live.task_outputs() if line in text]
    written = [
        kept
        for kept in output.splitlines()
        if kept.strip() and not kept.startswith(("[stderr]", "[exited with code"))
    ]
    assert written == [line], output
    assert "[exited with code 0]" in output, output
    assert follow_pids(live.session_id) == first, "the first follower stopped"
    assert follow_heartbeats(live.session_id), "the first follower left the daemon"
    return request

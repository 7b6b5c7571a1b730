"""Live updates with zero setup: the plugin's ``monitors`` entry in an interactive session.

The real Claude Code TUI under tmux, offline, with the plugin loaded from the checkout.
Claude Code arms the plugin's monitor (``agentmonitors events follow`` for its session)
about 0.7 s after launch; after one prompt the session is idle, and a change to a watched
file must reach the model as a new request, with no prompt typed and no Monitor tool
started by the agent, its newest input a ``<task-notification>`` from the monitor. After
``/clear`` (a new session id in the same process, the monitor not restarted) the same
follower goes on with the new session.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.heartbeats import read_records
from tests.e2e.claude_code import (
    ClaudeCode,
    ClaudeCodeUnavailable,
    processes_mentioning,
    skip_or_fail,
)
from tests.e2e.fake_messages_api import FakeMessagesApi, LoggedRequest
from tests.e2e.test_live_monitor import NOTIFICATION, event_lines, new_input
from tests.e2e.test_real_claude_code import (  # noqa: F401  (fixtures are used by name)
    agentmonitors,
    claude_code,
    claude_env,
    daemon_session,
    fake_api,
    leak_check,
)
from tests.e2e.tmux_claude import TMUX, TmuxClaude, seed_claude_json
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

DESCRIPTION = "AgentMon live updates"
WATCHED = "release-plan.txt"
MONITOR = """---
name: Release plan changed
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: normal
---
The release plan changed. Read it before going on.
"""
WAKE_TIMEOUT_S = 30.0


@pytest.fixture
def project(tmp_path: Path, claude_env: dict[str, str]) -> Path:  # noqa: F811
    """An enabled project with one normal file monitor, trusted by Claude Code."""
    if TMUX is None:
        # Where the real client is required (CI), a missing tmux fails the test.
        skip_or_fail(ClaudeCodeUnavailable("tmux is not installed: no interactive session"))
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / WATCHED).write_text("- cut the branch\n", encoding="utf-8")
    agentmonitors(root, claude_env, "init", "--enable-only")
    monitor = root / ".claude" / "monitors" / "release" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(MONITOR, encoding="utf-8")
    agentmonitors(root, claude_env, "validate")
    seed_claude_json(Path(claude_env["HOME"]), root)
    return root


def plugin_follower(host_session_id: str) -> list[dict[str, Any]]:
    return [
        dict(record)
        for record in read_records()
        if record.get("transport") == "follow" and record.get("hostSessionId") == host_session_id
    ]


def wake(api: FakeMessagesApi, since: int) -> LoggedRequest | None:
    """The first Messages request from ``since`` on whose newest input is a notification."""
    return next((r for r in api.messages_requests(since=since) if wake_in(r)), None)


def wake_in(request: LoggedRequest) -> bool:
    return NOTIFICATION in new_input(request)


def stored_events(project: Path, env: Mapping[str, str], session_id: str) -> list[str]:
    listed = agentmonitors(
        project, env, "events", "list", "--session", session_id, "--format", "json"
    )
    return [event["id"] for event in json.loads(listed.stdout)]


def change(project: Path, text: str) -> float:
    (project / "notes" / WATCHED).write_text(text, encoding="utf-8")
    return time.time()


def acknowledge(project: Path, env: Mapping[str, str], session_id: str) -> None:
    """What the agent does once it has read a delivery."""
    agentmonitors(project, env, "events", "ack", "--session", session_id)


def test_an_idle_interactive_session_is_woken_by_the_plugin_monitor(
    claude_code: ClaudeCode,  # noqa: F811
    project: Path,
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
    tmp_path: Path,
) -> None:
    host = str(uuid.uuid4())
    latencies: list[float] = []
    with TmuxClaude(claude_code, project, claude_env, host, tmp_path / "tmux.sock") as tui:
        # Armed with no prompt and no agent action.
        wait_for(lambda: plugin_follower(host), timeout=60, step=0.2)
        record = daemon_session(project, claude_env, host)
        tui.type("hello")
        first = wait_for(fake_api.messages_requests, timeout=60, step=0.1)[0]
        # The SessionStart sentence says live updates are on, and asks for no Monitor.
        assert "live updates are on" in first.raw and "Monitor tool" not in first.raw, first.raw
        wait_for(lambda: "ok" in tui.screen(), timeout=30)
        time.sleep(1.0)  # idle: the turn has ended

        wakes: list[LoggedRequest] = []
        events: list[set[str]] = []
        for round_ in range(3):
            mark = fake_api.mark()
            before = stored_events(project, claude_env, record["id"])
            written = change(project, f"- cut the branch\n- step {round_}\n")
            request = wait_for(lambda m=mark: wake(fake_api, m), timeout=WAKE_TIMEOUT_S)
            latencies.append(request.time - written)
            newest = new_input(request)
            assert f'Monitor event: "{DESCRIPTION}"' in newest, newest
            assert newest.count(NOTIFICATION) == 1, newest
            assert all(line.startswith("AgentMon: ") for line in event_lines(newest)), newest
            time.sleep(max(0.0, 3.0 - (time.time() - written)))
            # One wake per change: nothing else woke the session meanwhile.
            assert [r.index for r in fake_api.messages_requests(mark) if wake_in(r)] == [
                request.index
            ]
            wakes.append(request)
            events.append(set(stored_events(project, claude_env, record["id"])) - set(before))
            acknowledge(project, claude_env, record["id"])
        # No prompt was typed after the first, and the agent started no Monitor.
        prompts = [r for r in fake_api.messages_requests() if "hello" in new_input(r)]
        assert len(prompts) == 1
        assert not any('"name":"Monitor"' in r.raw.replace(" ", "") for r in fake_api.requests)
        # Each change made its own event, and a line that names one names it once.
        assert all(len(new) >= 1 for new in events) and not set.intersection(*events), events
        for new in events:
            for event_id in new:
                assert sum(new_input(w).count(event_id) for w in wakes) <= 1, event_id

        # The daemon restarts while the session is idle: the next change still wakes it.
        agentmonitors(project, claude_env, "daemon", "stop")
        mark = fake_api.mark()
        written = change(project, "- cut the branch\n- after the restart\n")
        request = wait_for(lambda: wake(fake_api, mark), timeout=WAKE_TIMEOUT_S + 15)
        restart_latency = request.time - written
        assert f'Monitor event: "{DESCRIPTION}"' in new_input(request)

        # /clear: Claude Code ends the session and starts one with a new id in the same
        # process, without restarting the plugin's monitor; its follower goes on with
        # the new session, and the next change wakes that one.
        followers = host_followers(host)
        assert len(followers) == 1, followers
        cleared_at = time.time()
        tui.type("/clear")
        cleared = wait_for(lambda: successor(project, claude_env, host), timeout=30, step=0.1)
        wait_for(lambda: plugin_follower(cleared), timeout=30, step=0.05)
        rearmed = time.time() - cleared_at
        assert not plugin_follower(host) and host_followers(host) == followers
        new_record = daemon_session(project, claude_env, cleared)
        mark = fake_api.mark()
        written = change(project, "- cut the branch\n- after /clear\n")
        request = wait_for(lambda: wake(fake_api, mark), timeout=WAKE_TIMEOUT_S)
        clear_latency = request.time - written
        newest = new_input(request)
        assert f'Monitor event: "{DESCRIPTION}"' in newest, newest
        assert f"--session {new_record['id']}" in newest and record["id"] not in newest, newest
    median = statistics.median(latencies)
    print(
        f"\nplugin monitor: file write -> model request {', '.join(f'{s:.2f}' for s in latencies)}"
        f" s (median {median:.2f} s); after a daemon restart {restart_latency:.2f} s;"
        f" /clear -> following the new session {rearmed:.2f} s, then a change woke it in"
        f" {clear_latency:.2f} s"
    )
    (tmp_path / "plugin-monitor-latency.json").write_text(
        json.dumps(
            {
                "writeToRequestS": latencies,
                "afterRestartS": restart_latency,
                "clearToFollowingS": rearmed,
                "afterClearS": clear_latency,
            }
        ),
        encoding="utf-8",
    )


def host_followers(host_session_id: str) -> list[int]:
    """The plugin's follower processes started for ``host_session_id``."""
    return [pid for pid, command in processes_mentioning(host_session_id) if "follow" in command]


def successor(project: Path, env: Mapping[str, str], host_session_id: str) -> str | None:
    """The host id of the session /clear started (active, not ``host_session_id``)."""
    listed = agentmonitors(project, env, "session", "list", "--format", "json")
    found = [
        s["hostSessionId"]
        for s in json.loads(listed.stdout)
        if s["hostSessionId"] != host_session_id and s["status"] == "active"
    ]
    return found[0] if found else None

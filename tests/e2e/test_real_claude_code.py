"""The real Claude Code CLI, offline, with our plugin loaded from the repository root.

Claude Code talks to a fake Messages API on 127.0.0.1 (it answers ``ok`` to everything);
its hooks run the ``agentmonitors`` of this virtualenv against a real daemon, in a
throw-away workspace, HOME and data dir. See ``claude_code.py`` for where the
CLI comes from (it may be npm-installed into ``.cache/claude-code`` on the first run;
without npm these tests skip).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.workspace import read_local_state, write_local_state
from tests.e2e.claude_code import (
    ClaudeCode,
    ClaudeCodeUnavailable,
    StreamSession,
    Turn,
    isolated_env,
    kill_pids,
    locate_claude_code,
    processes_mentioning,
    run_print,
    skip_or_fail,
    venv_bin,
    wait_for_no_processes,
)
from tests.e2e.fake_messages_api import FakeMessagesApi, ToolCall

# Installing the CLI (first run only) happens inside the first test's time budget.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

WATCHED = "deploy-checklist.txt"
MONITOR = """---
name: Checklist changed
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: high
---
The deploy checklist changed. Read it before going on.
"""
DOCS_MONITOR = """---
name: Docs changed
watch:
  type: file-fingerprint
  globs: "docs/*.md"
urgency: normal
---
Read the changed page.
"""
REMINDER = "Monitored changes are pending."  # a normal change, as the hooks surface it
# How Claude Code hands a UserPromptSubmit hook's additionalContext to the model.
DELIVERED = "UserPromptSubmit hook additional context: AgentMon:"
PLUGIN_SERVER_PREFIX = "plugin:agentmonitors:"
STORE_TIMEOUT_S = 90.0  # observed: listed ~30 s after the change (fingerprint poll + debounce)
SETTLE_S = 15.0  # a high event is held from delivery until it is this old
SETTLE_MARGIN_S = 2.0


# ------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def claude_code(request: pytest.FixtureRequest) -> ClaudeCode:
    """The CLI, located or installed once per run (pytest caches a skip as well)."""
    try:
        found: ClaudeCode | ClaudeCodeUnavailable = locate_claude_code()
    except ClaudeCodeUnavailable as error:
        found = error
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ne2e: {describe_claude(found)}")
    if isinstance(found, ClaudeCodeUnavailable):
        skip_or_fail(found)
    return found


def describe_claude(found: ClaudeCode | ClaudeCodeUnavailable) -> str:
    if isinstance(found, ClaudeCodeUnavailable):
        return f"Claude Code unavailable: {found}"
    text = f"Claude Code {found.version} ({found.source}: {found.path})"
    if found.install_seconds is not None and found.install_bytes is not None:
        text += (
            f"; npm install took {found.install_seconds:.1f}s,"
            f" {found.install_bytes / 1e6:.0f} MB on disk"
        )
    return text


@pytest.fixture
def leak_check(isolated_environment: Path, tmp_path: Path) -> Iterator[None]:
    """After the test: stop the workspace's daemon, then nothing of ours may be alive."""
    yield
    project = tmp_path / "project"
    if (project / ".claude").is_dir():
        agentmonitors(project, dict(os.environ), "daemon", "stop", check=False)
    alive = wait_for_no_processes(str(tmp_path))
    if alive:
        kill_pids([pid for pid, _ in alive])
        pytest.fail(f"processes outlived the test (killed now): {alive}")


@pytest.fixture
def fake_api(tmp_path: Path, leak_check: None) -> Iterator[FakeMessagesApi]:
    with FakeMessagesApi(tmp_path / "api-requests.jsonl") as api:
        yield api


@pytest.fixture
def claude_env(tmp_path: Path, fake_api: FakeMessagesApi) -> dict[str, str]:
    """``isolated_env`` around the HOME and data dir that conftest made for this test."""
    home = Path(os.environ["HOME"])
    data = Path(os.environ["XDG_DATA_HOME"])
    assert home.is_relative_to(tmp_path) and data.is_relative_to(tmp_path)
    return isolated_env(home, fake_api.base_url, data)


@pytest.fixture
def workspace(tmp_path: Path, claude_env: dict[str, str]) -> Path:
    """An enabled project with one high-urgency file monitor on ``notes/*.txt``."""
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / WATCHED).write_text("- tag the release\n", encoding="utf-8")
    agentmonitors(project, claude_env, "init", "--enable-only")
    monitor = project / ".claude" / "monitors" / "checklist" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(MONITOR, encoding="utf-8")
    agentmonitors(project, claude_env, "validate")
    return project


# ------------------------------------------------------------------------ helpers


def add_docs_monitor(project: Path) -> None:
    """A normal monitor on ``docs/*.md``: no settle window, its reminder comes at once."""
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "guide.md").write_text("first\n", encoding="utf-8")
    monitor = project / ".claude" / "monitors" / "docs" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(DOCS_MONITOR, encoding="utf-8")


def hooks_only(project: Path) -> None:
    """``live: off``: an idle headless session is no longer woken (the plugin's rewake
    hook, tests/e2e/test_rewake.py), so a change waits for the next turn's hooks."""
    state = read_local_state(str(project))
    write_local_state(str(project), state._replace(live="off"))


def agentmonitors(
    cwd: Path, env: Mapping[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [os.path.join(venv_bin(), "agentmonitors"), *args],
        cwd=cwd,
        env={**env, "PWD": str(cwd)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check:
        assert done.returncode == 0, f"agentmonitors {args}: {done.stdout}{done.stderr}"
    return done


def daemon_session(cwd: Path, env: Mapping[str, str], host_session_id: str) -> dict[str, Any]:
    """The daemon's record of the Claude Code session ``host_session_id``."""
    listed = agentmonitors(cwd, env, "session", "list", "--format", "json")
    sessions: list[dict[str, Any]] = [
        s for s in json.loads(listed.stdout) if s["hostSessionId"] == host_session_id
    ]
    assert len(sessions) == 1, f"no daemon session for {host_session_id}: {listed.stdout}"
    return sessions[0]


def wait_for_dormant(cwd: Path, env: Mapping[str, str], host_session_id: str) -> dict[str, Any]:
    """The session once SessionEnd (``agentmonitors session end``) has marked it dormant."""
    deadline = time.monotonic() + 15
    record = daemon_session(cwd, env, host_session_id)
    while record["status"] != "dormant" and time.monotonic() < deadline:
        time.sleep(0.2)
        record = daemon_session(cwd, env, host_session_id)
    assert record["status"] == "dormant", f"SessionEnd did not close the session: {record}"
    return record


def wait_for_stored_event(
    cwd: Path, env: Mapping[str, str], session_id: str, name: str
) -> dict[str, Any]:
    """Poll ``events list`` until the daemon has stored an event that names ``name``."""
    deadline = time.monotonic() + STORE_TIMEOUT_S
    listed = ""
    while time.monotonic() < deadline:
        listed = agentmonitors(
            cwd, env, "events", "list", "--session", session_id, "--format", "json"
        ).stdout
        events: list[dict[str, Any]] = [e for e in json.loads(listed) if name in json.dumps(e)]
        if events:
            return events[0]
        time.sleep(0.5)
    pytest.fail(f"no event naming {name} was stored within {STORE_TIMEOUT_S}s: {listed}")


def wait_until_settled(event: dict[str, Any]) -> float:
    """Sleep until a high event is old enough to be delivered; the seconds slept."""
    try:
        created = datetime.fromisoformat(event["createdAt"]).timestamp()
    except (KeyError, TypeError, ValueError):
        created = time.time()
    pause = max(0.0, created + SETTLE_S + SETTLE_MARGIN_S - time.time())
    time.sleep(pause)
    return pause


def hook_outcomes(events: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    outcomes: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event.get("subtype") == "hook_response":
            outcomes.setdefault(str(event.get("hook_event")), []).append(event)
    return outcomes


def init_event(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    found = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    assert found, "no system/init event in the stream-json output"
    return found[0]


def plugin_mcp_servers(init: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        server
        for server in init.get("mcp_servers", [])
        if str(server.get("name", "")).startswith(PLUGIN_SERVER_PREFIX)
    ]


def assert_ok(turn: Turn, session: StreamSession) -> None:
    result = turn.result
    assert result.get("subtype") == "success", session.describe()
    assert result.get("result") == "ok", session.describe()
    assert result.get("is_error") is False, session.describe()


def turn_bodies(api: FakeMessagesApi, turn: Turn, end: int | None = None) -> list[str]:
    """Raw bodies of the Messages requests a turn made (those that carry its prompt)."""
    return [
        r.raw
        for r in api.messages_requests(since=turn.first_request)
        if (end is None or r.index < end) and turn.prompt in r.raw
    ]


def deliver_between_turns(
    claude: ClaudeCode,
    project: Path,
    env: Mapping[str, str],
    api: FakeMessagesApi,
    tmp_path: Path,
    extra_args: Sequence[str] = (),
    before_second_turn: Callable[[dict[str, Any]], None] | None = None,
    *,
    high: bool = True,
) -> tuple[StreamSession, list[str]]:
    """Turn 1, change the watched file, let the event settle, turn 2; in ONE process.

    A high change is shown whole (its file named) once settled; a normal one (``high``
    False: ``docs/guide.md`` under a normal monitor) at once, as the reminder. Also
    returns the command lines of this test's processes seen between the turns.
    """
    if not high:
        add_docs_monitor(project)
    changed_file, expected = (WATCHED, WATCHED) if high else ("guide.md", REMINDER)
    hooks_only(project)
    session = StreamSession(
        claude,
        project,
        env,
        str(uuid.uuid4()),
        tmp_path / "claude-stderr.txt",
        extra_args=extra_args,
        stdout_path=tmp_path / "claude-stdout.jsonl",
        request_mark=api.mark,
    )
    with session:
        first = session.send("hello")
        assert_ok(first, session)
        assert first.result.get("session_id") == session.session_id
        record = daemon_session(project, env, session.session_id)
        assert record["workspacePath"] == str(project)
        running = [command for _, command in processes_mentioning(str(tmp_path))]

        changed = time.monotonic()
        if high:
            (project / "notes" / WATCHED).write_text(
                "- tag the release\n- rotate the signing key first\n", encoding="utf-8"
            )
        else:
            (project / "docs" / "guide.md").write_text("second\n", encoding="utf-8")
        event = wait_for_stored_event(project, env, record["id"], changed_file)
        assert event["urgency"] == ("high" if high else "normal"), event
        stored = time.monotonic() - changed
        paused = wait_until_settled(event) if high else 0.0
        print(f"turn 1 {first.seconds:.1f}s; event stored {stored:.1f}s after the change;")
        print(f"waited {paused:.1f}s more for it to settle: {event.get('summary')!r}")
        if before_second_turn is not None:
            before_second_turn(record)

        second = session.send("again")
        assert_ok(second, session)
        print(f"turn 2 {second.seconds:.1f}s")
    # Closing stdin ended the session: SessionEnd ran.
    wait_for_dormant(project, env, session.session_id)

    first_bodies = turn_bodies(api, first, end=second.first_request)
    second_bodies = turn_bodies(api, second)
    assert first_bodies, "turn 1 reached the fake API"
    assert second_bodies, "turn 2 reached the fake API"
    assert not any(DELIVERED in body for body in first_bodies), "nothing to deliver in turn 1"
    delivered = [body for body in second_bodies if DELIVERED in body]
    assert delivered, (
        f"turn 2's request lacks {DELIVERED!r}; UserPromptSubmit hook said: "
        f"{second.hook_responses('UserPromptSubmit')}"
    )
    assert expected in delivered[-1]
    # The same text, as the hook printed it.
    [hook] = second.hook_responses("UserPromptSubmit")
    assert hook["exit_code"] == 0 and hook["outcome"] == "success", hook
    context = json.loads(hook["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("AgentMon:") and expected in context
    return session, running


def channel_servers(commands: Sequence[str]) -> list[str]:
    return [command for command in commands if "agentmonitors channel serve" in command]


# ------------------------------------------------------------------------ tests


def test_print_mode_runs_session_start_and_prompt_hooks(
    claude_code: ClaudeCode,
    workspace: Path,
    claude_env: dict[str, str],
    fake_api: FakeMessagesApi,
) -> None:
    run = run_print(
        claude_code,
        "hello",
        cwd=workspace,
        env=claude_env,
        args=["--output-format", "stream-json", "--verbose", "--include-hook-events"],
    )
    (workspace.parent / "claude-stdout.jsonl").write_text(run.stdout, encoding="utf-8")

    assert run.returncode == 0, run.describe()
    result = run.result  # the same object `--output-format json` prints alone
    assert result["result"] == "ok", run.describe()
    assert result["is_error"] is False
    hooks = hook_outcomes(run.events)
    # SessionEnd runs as Claude Code exits, after the last line it prints: see below.
    for name in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert name in hooks, f"{name} hook did not run:\n{run.describe()}"
        for outcome in hooks[name]:
            assert outcome["exit_code"] == 0 and outcome["outcome"] == "success", outcome
    assert "AgentMon: session" in hooks["SessionStart"][0]["stderr"]
    record = wait_for_dormant(workspace, claude_env, result["session_id"])  # SessionEnd ran
    assert record["workspacePath"] == str(workspace)
    assert fake_api.messages_requests(), "Claude Code never called the fake API"


def test_event_is_delivered_at_user_prompt_submit(
    claude_code: ClaudeCode,
    workspace: Path,
    claude_env: dict[str, str],
    fake_api: FakeMessagesApi,
    tmp_path: Path,
) -> None:
    # --strict-mcp-config without --mcp-config: the plugin's hooks, none of its MCP servers.
    session, running = deliver_between_turns(
        claude_code, workspace, claude_env, fake_api, tmp_path, ["--strict-mcp-config"]
    )
    assert plugin_mcp_servers(init_event(session.all_events)) == []
    assert channel_servers(running) == []


def test_event_is_delivered_at_user_prompt_submit_with_the_mcp_server_loaded(
    claude_code: ClaudeCode,
    workspace: Path,
    claude_env: dict[str, str],
    fake_api: FakeMessagesApi,
    tmp_path: Path,
) -> None:
    # Channels never load in -p mode: Claude Code drops every push silently. The channel
    # server still binds to the session and pushes the change (a lease that no proof
    # will ever confirm); the hook path must deliver it all the same. A normal change:
    # the push and the hook's answer to it are the point, not a high change's settle.
    from agentmonitors.daemon.client import call
    from agentmonitors.workspace import read_local_state

    def channel_pushed(record: dict[str, Any]) -> None:
        socket = read_local_state(str(workspace)).socket
        assert socket is not None
        deadline = time.monotonic() + 20
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = call(socket, "channel.status", {"sessionId": record["id"]})
            # A push is counted when reserved and awaits proof once sent: wait for both.
            if status.get("pushes") and status.get("awaitingProof"):
                break
            time.sleep(0.2)
        assert status == {"confirmed": False, "awaitingProof": True, "pushes": 1}, status

    session, running = deliver_between_turns(
        claude_code,
        workspace,
        claude_env,
        fake_api,
        tmp_path,
        before_second_turn=channel_pushed,
        high=False,
    )

    init = init_event(session.all_events)
    if "mcp_servers" in init:
        servers = plugin_mcp_servers(init)
        assert servers, f"the plugin's MCP server is not listed: {init['mcp_servers']}"
        assert all(server.get("status") == "connected" for server in servers), servers
    if Path("/proc").is_dir():
        assert channel_servers(running), f"no `channel serve` process between turns: {running}"


def test_delivery_follows_the_agent_into_a_subfolder(
    claude_code: ClaudeCode,
    workspace: Path,
    claude_env: dict[str, str],
    fake_api: FakeMessagesApi,
    tmp_path: Path,
) -> None:
    """A Bash call `cd docs && ...` moves the hook payload's cwd; PostToolUse still delivers.

    The command waits (inside the tool call) until the event is stored, so the turn's
    UserPromptSubmit has nothing yet and the delivery can only come from the PostToolUse
    hook, whose payload cwd is the subfolder. The change is a normal one (its reminder,
    with no settle window to wait out): where the hook looks for its session is the point.
    """
    add_docs_monitor(workspace)
    started, ready = tmp_path / "tool-started", tmp_path / "event-settled"
    command = f"cd docs && touch {started} && while [ ! -e {ready} ]; do sleep 0.2; done && pwd"
    fake_api.script_tool_call(
        ToolCall(
            trigger="work in docs",
            name="Bash",
            input={"command": command, "description": "Wait in docs", "timeout": 300_000},
        )
    )
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
    failures: list[BaseException] = []

    def change_and_settle(session_record: dict[str, Any]) -> None:
        try:
            deadline = time.monotonic() + 60
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert started.exists(), "the Bash tool call never started"
            (workspace / "docs" / "guide.md").write_text("second\n", encoding="utf-8")
            event = wait_for_stored_event(workspace, claude_env, session_record["id"], "guide")
            assert event["urgency"] == "normal", event
        except BaseException as error:  # reported by the test thread
            failures.append(error)
        finally:
            ready.touch()

    with session:
        first = session.send("hello")
        assert_ok(first, session)
        record = daemon_session(workspace, claude_env, session.session_id)
        assert record["workspacePath"] == str(workspace)
        helper = threading.Thread(target=change_and_settle, args=(record,), daemon=True)
        helper.start()
        second = session.send("please work in docs", timeout=240)
        helper.join(timeout=10)
        assert not failures, failures
        assert_ok(second, session)

    [prompt_hook] = second.hook_responses("UserPromptSubmit")
    assert prompt_hook["stdout"] == "", "the event was not settled at the prompt yet"
    tool_hooks = second.hook_responses("PostToolUse")
    assert tool_hooks, f"no PostToolUse hook ran: {session.describe()}"
    hook = tool_hooks[-1]
    assert hook["exit_code"] == 0 and hook["outcome"] == "success", hook
    assert hook["stdout"], f"PostToolUse in docs/ delivered nothing: {hook}"
    context = json.loads(hook["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(f"AgentMon: {REMINDER}"), context
    assert f"--session {record['id']}" in context, context
    # The Bash call really ran in the subfolder ...
    results = [
        block
        for event in second.events
        if event.get("type") == "user"
        for block in event.get("message", {}).get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert str(workspace / "docs") in json.dumps(results), results
    # ... and the model saw the delivery in the request that carries the tool's result.
    delivered = [
        r.raw
        for r in fake_api.messages_requests(since=second.first_request)
        if "PostToolUse:Bash hook additional context: AgentMon:" in r.raw
    ]
    assert delivered, "no request carried the PostToolUse delivery"
    assert REMINDER in delivered[-1]
    # Delivered once, at the root's session: claimed there, nothing left pending.
    listed = agentmonitors(
        workspace, claude_env, "events", "list", "--session", record["id"], "--format", "json"
    )
    states = {event["deliveryState"] for event in json.loads(listed.stdout)}
    assert states == {"claimed"}, listed.stdout
    # SessionEnd also ran in docs/ and still closed the root's session.
    wait_for_dormant(workspace, claude_env, session.session_id)

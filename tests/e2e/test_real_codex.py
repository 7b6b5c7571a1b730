"""The real Codex CLI, offline, with our hooks in the project's ``.codex/hooks.json``.

Codex talks to a fake Responses API on 127.0.0.1 (a custom model provider in a throw-away
``CODEX_HOME``; it answers ``ok`` to everything); its hooks run the ``agentmonitors`` of
this virtualenv against a real daemon, in a throw-away workspace, HOME and data dir. See
``codex_cli.py`` for where the CLI comes from (npm-installed into ``.cache/codex`` on the
first run; without npm these tests skip, or fail when real clients are required).

Two front ends of the same Codex engine drive it: ``codex exec`` (one prompt per process;
``exec resume`` continues a thread) and ``codex app-server`` (JSON-RPC over stdio, the
one way to hold a thread open across several turns offline, and to compact it on demand).
Hook text reaches the model in the logged request bodies: SessionStart, UserPromptSubmit
and PostToolUse context as ``developer`` messages, a Stop hook's block reason as a new
user message ``<hook_prompt hook_run_id="...">reason</hook_prompt>``.

What is not driven: Codex's interactive ``/hooks`` review screen (a terminal UI). The
tests record trust the way it does (``[hooks.state."<key>"] trusted_hash`` in the user
config, key and hash taken from Codex's own ``hooks/list``), and one test shows that
untrusted hooks are skipped without a word.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.claude_code import kill_pids, venv_bin, wait_for_no_processes
from tests.e2e.codex_app_server import AppServer, TurnRecord, hook_trust_entries, trust_hooks
from tests.e2e.codex_cli import (
    Codex,
    CodexUnavailable,
    ExecRun,
    isolated_env,
    locate_codex,
    run_exec,
    skip_or_fail,
    write_config,
)
from tests.e2e.fake_responses_api import FakeResponsesApi, LoggedRequest, ToolCall

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

WATCHED = "deploy-checklist.txt"
LOW_FILE = "style-guide.md"
HIGH_MONITOR = """---
name: Checklist changed
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: high
---
The deploy checklist changed. Read it before going on.
"""
LOW_MONITOR = """---
name: Style guide changed
watch:
  type: file-fingerprint
  globs: "guides/*.md"
urgency: low
---
The style guide changed; look at it when you are done.
"""
RUNBOOK = "steps.md"
NORMAL_MONITOR = """---
name: Runbook changed
watch:
  type: file-fingerprint
  globs: "runbook/*.md"
urgency: normal
---
The runbook changed.
"""
OUR_EVENTS = {"sessionStart", "userPromptSubmit", "postToolUse", "stop"}
STORE_TIMEOUT_S = 90.0
SETTLE_S = 15.0  # a high event is held from delivery until it is this old
SETTLE_MARGIN_S = 2.0
REMINDER = "Monitored changes are pending."
STOP_REASON = f"AgentMon: {REMINDER}"


# ------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def codex(request: pytest.FixtureRequest) -> Codex:
    """The CLI, located or installed once per run (pytest caches a skip as well)."""
    try:
        found: Codex | CodexUnavailable = locate_codex()
    except CodexUnavailable as error:
        found = error
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        text = found.describe() if isinstance(found, Codex) else f"Codex unavailable: {found}"
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ne2e: {text}")
    if isinstance(found, CodexUnavailable):
        skip_or_fail(found)
    return found


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
def fake_api(tmp_path: Path, leak_check: None) -> Iterator[FakeResponsesApi]:
    with FakeResponsesApi(tmp_path / "api-requests.jsonl") as api:
        yield api


@pytest.fixture
def codex_home() -> Path:
    return Path(os.environ["HOME"]) / ".codex"


@pytest.fixture
def codex_env(tmp_path: Path, fake_api: FakeResponsesApi, codex_home: Path) -> dict[str, str]:
    home = Path(os.environ["HOME"])
    data = Path(os.environ["XDG_DATA_HOME"])
    assert home.is_relative_to(tmp_path) and data.is_relative_to(tmp_path)
    return isolated_env(home, codex_home, fake_api.base_url.removesuffix("/v1"), data)


@pytest.fixture
def workspace(
    tmp_path: Path, codex_env: dict[str, str], fake_api: FakeResponsesApi, codex_home: Path
) -> Path:
    """An enabled git project with a high, a normal and a low file monitor and our Codex
    hooks."""
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "guides").mkdir()
    (project / "runbook").mkdir()
    (project / "notes" / WATCHED).write_text("- tag the release\n", encoding="utf-8")
    (project / "guides" / LOW_FILE).write_text("- tabs\n", encoding="utf-8")
    (project / "runbook" / RUNBOOK).write_text("1. build\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    agentmonitors(project, codex_env, "init", "--enable-only")
    monitors = (("checklist", HIGH_MONITOR), ("runbook", NORMAL_MONITOR), ("style", LOW_MONITOR))
    for name, text in monitors:
        monitor = project / ".claude" / "monitors" / name / "MONITOR.md"
        monitor.parent.mkdir(parents=True)
        monitor.write_text(text, encoding="utf-8")
    agentmonitors(project, codex_env, "validate")
    install_hooks(project, codex_env)
    write_config(codex_home, fake_api.base_url, [project])
    return project


@pytest.fixture
def trusted(codex: Codex, workspace: Path, codex_env: dict[str, str], codex_home: Path) -> Path:
    """The workspace with our hooks trusted, as `/hooks` would record it."""
    assert trust_hooks(codex, workspace, codex_env, codex_home) == len(OUR_EVENTS)
    statuses = {
        e["eventName"]: e["trustStatus"] for e in hook_trust_entries(codex, workspace, codex_env)
    }
    assert statuses == dict.fromkeys(OUR_EVENTS, "trusted"), statuses
    return workspace


# ------------------------------------------------------------------------ helpers


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


def install_hooks(project: Path, env: Mapping[str, str]) -> None:
    """``agentmonitors init --enable-only --host codex``, twice: the second changes nothing."""
    first = agentmonitors(project, env, "init", "--enable-only", "--host", "codex")
    hooks = project / ".codex" / "hooks.json"
    written = hooks.read_bytes()
    assert "/hooks" in first.stdout, first.stdout  # the trust step is spelled out
    again = agentmonitors(project, env, "init", "--enable-only", "--host", "codex")
    assert "Hooks already installed" in again.stdout, again.stdout
    assert hooks.read_bytes() == written


def sessions(cwd: Path, env: Mapping[str, str]) -> list[dict[str, Any]]:
    listed = agentmonitors(cwd, env, "session", "list", "--format", "json")
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


def daemon_session(cwd: Path, env: Mapping[str, str], thread_id: str) -> dict[str, Any]:
    matches = [s for s in sessions(cwd, env) if s["hostSessionId"] == thread_id]
    assert len(matches) == 1, f"no daemon session for Codex thread {thread_id}"
    return matches[0]


def listed_events(cwd: Path, env: Mapping[str, str], session_id: str) -> list[dict[str, Any]]:
    listed = agentmonitors(
        cwd, env, "events", "list", "--session", session_id, "--format", "json"
    ).stdout
    found: list[dict[str, Any]] = json.loads(listed)
    return found


def change_and_wait(
    cwd: Path, env: Mapping[str, str], session_id: str, path: Path, text: str
) -> dict[str, Any]:
    """Write ``path`` and poll until the daemon has stored a new event that names it."""
    seen = {event["id"] for event in listed_events(cwd, env, session_id)}
    path.write_text(text, encoding="utf-8")
    deadline = time.monotonic() + STORE_TIMEOUT_S
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        events = listed_events(cwd, env, session_id)
        new = [e for e in events if e["id"] not in seen and path.name in json.dumps(e)]
        if new:
            return new[0]
        time.sleep(0.3)
    pytest.fail(f"no new event naming {path.name} within {STORE_TIMEOUT_S}s: {events}")


def seconds_until_settled(event: dict[str, Any]) -> float:
    """How long until a high event is old enough to be delivered (with a margin)."""
    try:
        created = datetime.fromisoformat(event["createdAt"]).timestamp()
    except (KeyError, TypeError, ValueError):
        created = time.time()
    return max(0.0, created + SETTLE_S + SETTLE_MARGIN_S - time.time())


def wait_until_settled(event: dict[str, Any]) -> None:
    time.sleep(seconds_until_settled(event))


def settled_high_change(project: Path, env: Mapping[str, str], session_id: str, text: str) -> None:
    event = change_and_wait(project, env, session_id, project / "notes" / WATCHED, text)
    assert event["urgency"] == "high", event
    wait_until_settled(event)


def normal_change(project: Path, env: Mapping[str, str], session_id: str, text: str) -> None:
    event = change_and_wait(project, env, session_id, project / "runbook" / RUNBOOK, text)
    assert event["urgency"] == "normal", event


def change_while_the_tool_runs(
    project: Path,
    env: Mapping[str, str],
    session_id: str,
    started: Path,
    ready: Path,
    outcome: list[dict[str, Any] | BaseException],
) -> None:
    """Once the model's command has started: a normal change, stored (it has no settle
    window, so the tool's end is the first point that can deliver it); then let the
    command end."""
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), "the model's command never started"
        path = project / "runbook" / RUNBOOK
        event = change_and_wait(project, env, session_id, path, "1. build\n2. a tool ran\n")
        assert event["urgency"] == "normal", event
        outcome.append(event)
    except BaseException as error:  # reported by the test thread
        outcome.append(error)
    finally:
        ready.touch()


def items(request: LoggedRequest) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = request.body["input"]
    return found


def texts(request: LoggedRequest, role: str) -> list[str]:
    """The texts of the request's input messages of one role, in order."""
    return [
        str(part.get("text", ""))
        for item in items(request)
        if item.get("type") == "message" and item.get("role") == role
        for part in item.get("content", [])
        if isinstance(part, dict)
    ]


def with_agentmon(request: LoggedRequest, role: str) -> list[str]:
    return [text for text in texts(request, role) if "AgentMon:" in text]


def around_prompt(request: LoggedRequest, prompt: str) -> tuple[list[str], list[str]]:
    """Our developer texts right before the newest ``prompt`` message, and after it.

    Codex puts SessionStart's context in front of the turn's prompt and
    UserPromptSubmit's behind it: the side tells which hook delivered.
    """
    messages = [item for item in items(request) if item.get("type") == "message"]
    where = max(
        index
        for index, item in enumerate(messages)
        if item.get("role") == "user" and prompt in json.dumps(item.get("content"))
    )

    def ours(run: list[dict[str, Any]]) -> list[str]:
        return [
            str(part.get("text", ""))
            for item in run
            if item.get("role") == "developer"
            for part in item.get("content", [])
            if "AgentMon:" in str(part.get("text", ""))
        ]

    before: list[dict[str, Any]] = []
    for item in reversed(messages[:where]):
        if item.get("role") != "developer":
            break
        before.insert(0, item)
    after = [item for item in messages[where + 1 :] if item.get("role") == "developer"]
    return ours(before), ours(after)


def turn_requests(
    api: FakeResponsesApi, turn: TurnRecord, end: int | None = None
) -> list[LoggedRequest]:
    return [
        r for r in api.response_requests(since=turn.first_request) if end is None or r.index < end
    ]


def assert_ok(run: ExecRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.agent_messages() and set(run.agent_messages()) == {"ok"}, run.describe()


def only_model_traffic(api: FakeResponsesApi) -> None:
    """Everything Codex sent went to the model endpoint (the proxies point here too)."""
    others = [(r.method, r.path) for r in api.requests if not r.is_response]
    assert others == [], f"Codex made requests other than to the model: {others}"


# ------------------------------------------------------------------------ tests


def test_untrusted_hooks_are_skipped_until_trusted(
    codex: Codex,
    workspace: Path,
    codex_env: dict[str, str],
    codex_home: Path,
    fake_api: FakeResponsesApi,
) -> None:
    """Codex lists our four hooks as untrusted and runs none of them: the trust step."""
    entries = hook_trust_entries(codex, workspace, codex_env)
    assert {e["eventName"] for e in entries} == OUR_EVENTS
    assert {e["trustStatus"] for e in entries} == {"untrusted"}
    assert {e["sourcePath"] for e in entries} == {str(workspace / ".codex" / "hooks.json")}
    assert all("--host codex" in e["command"] for e in entries)
    # Codex read our timeouts (its default is 600 s): the file's shape is the one it reads.
    timeouts = {e["eventName"]: e["timeoutSec"] for e in entries}
    assert timeouts == {"sessionStart": 60, "userPromptSubmit": 30, "postToolUse": 30, "stop": 30}

    skipped = run_exec(codex, "hello", cwd=workspace, env=codex_env)
    assert_ok(skipped)
    listed = agentmonitors(workspace, codex_env, "session", "list", "--format", "json", check=False)
    assert listed.returncode != 0 or json.loads(listed.stdout) == [], listed.stdout

    assert trust_hooks(codex, workspace, codex_env, codex_home) == len(OUR_EVENTS)
    ran = run_exec(codex, "hello", cwd=workspace, env=codex_env)
    assert_ok(ran)
    assert ran.thread_id is not None
    record = daemon_session(workspace, codex_env, ran.thread_id)
    assert record["adapter"] == "codex"
    assert record["workspacePath"] == str(workspace)
    assert record["status"] == "active"  # no SessionEnd: it stays until idle expiry
    only_model_traffic(fake_api)


def test_exec_resume_recaps_a_change_at_session_start(
    codex: Codex,
    trusted: Path,
    codex_env: dict[str, str],
    fake_api: FakeResponsesApi,
) -> None:
    """``codex exec``, a change, then ``codex exec resume``: SessionStart (resume) recaps it.
    (A recap shows what is unread whatever its urgency: a normal change, with no settle.)"""
    first = run_exec(codex, "hello", cwd=trusted, env=codex_env)
    assert_ok(first)
    assert first.thread_id is not None
    record = daemon_session(trusted, codex_env, first.thread_id)
    [request] = fake_api.response_requests()
    assert with_agentmon(request, "developer") == [], "nothing to deliver in run 1"

    normal_change(trusted, codex_env, record["id"], "1. build\n2. rotate the key first\n")
    mark = fake_api.mark()
    second = run_exec(codex, "again", cwd=trusted, env=codex_env, args=["resume", first.thread_id])
    assert_ok(second)
    assert second.thread_id in (None, first.thread_id)
    assert daemon_session(trusted, codex_env, first.thread_id)["id"] == record["id"]
    requests = fake_api.response_requests(since=mark)
    assert requests, "run 2 reached the fake API"
    at_start, at_prompt = around_prompt(requests[0], "again")
    assert at_start, f"no SessionStart delivery in run 2: {texts(requests[0], 'developer')}"
    assert RUNBOOK in at_start[-1]
    assert at_prompt == [], "claimed at SessionStart, so nothing is left for the prompt"
    assert len(requests) == 1, "nothing left for Stop either: no continuation"
    only_model_traffic(fake_api)


def test_a_change_reaches_the_model_at_the_next_prompt_at_stop_and_after_compaction(
    codex: Codex,
    trusted: Path,
    codex_env: dict[str, str],
    fake_api: FakeResponsesApi,
    tmp_path: Path,
) -> None:
    """One Codex thread over five turns in ``codex app-server``.

    Turn 2: a settled high change, delivered by UserPromptSubmit. Turn 3: a normal
    change made while the model's command runs, its reminder delivered by PostToolUse.
    Turn 4: a low change, held at the prompt, delivered at Stop as a block reason; Codex
    asks the model once more and the second Stop (``stop_hook_active``) injects nothing.
    Turn 5, after an acknowledgement, a change and a compaction: SessionStart
    (``compact``) recaps what is unread, that change alone.
    """
    server = AppServer(
        codex, trusted, codex_env, tmp_path / "codex-app-server-stderr.txt", fake_api.mark
    )
    with server:
        thread_id = server.start_thread()
        first = server.turn("hello")
        record = daemon_session(trusted, codex_env, thread_id)
        assert record["adapter"] == "codex"
        turn1 = turn_requests(fake_api, first)
        assert len(turn1) == 1 and with_agentmon(turn1[0], "developer") == []

        settled_high_change(trusted, codex_env, record["id"], "- tag\n- rotate the key first\n")
        second = server.turn("again")
        [request] = turn_requests(fake_api, second)
        at_start, at_prompt = around_prompt(request, "again")
        assert at_start == [], "SessionStart ran in turn 1 only"
        assert at_prompt, f"turn 2 lacks the delivery: {texts(request, 'developer')}"
        assert WATCHED in at_prompt[-1]
        [prompt_hook] = second.hook_runs("userPromptSubmit")
        assert prompt_hook["status"] == "completed", prompt_hook

        # PostToolUse: the change happens while the model's command runs (it waits for
        # the event to be stored), so the prompt had nothing to deliver.
        started, ready = tmp_path / "tool-started", tmp_path / "event-settled"
        fake_api.script_tool_call(
            ToolCall(
                trigger="wait in a tool",
                name="exec_command",
                arguments={
                    "cmd": f"touch {started} && while [ ! -e {ready} ]; do sleep 0.2; done",
                    "yield_time_ms": 30000,  # Codex's most: the command must end inside it
                },
            )
        )
        outcome: list[dict[str, Any] | BaseException] = []
        helper = threading.Thread(
            target=change_while_the_tool_runs,
            args=(trusted, codex_env, record["id"], started, ready, outcome),
            daemon=True,
        )
        helper.start()
        tooled = server.turn("please wait in a tool")
        helper.join(timeout=60)
        [normal] = outcome
        assert not isinstance(normal, BaseException), normal
        call, after_tool = turn_requests(fake_api, tooled)
        assert around_prompt(call, "wait in a tool") == ([], []), "nothing at the prompt"
        kinds = [item.get("type") for item in items(after_tool)]
        assert kinds[-1] == "function_call_output", kinds
        assert "Process exited with code 0" in json.dumps(items(after_tool)[-1])
        tool_context = items(after_tool)[kinds.index("function_call") + 1]
        assert tool_context.get("role") == "developer", tool_context
        reminder = json.dumps(tool_context)
        assert f"AgentMon: {REMINDER}" in reminder, reminder
        assert f"--session {record['id']}" in reminder, reminder
        [tool_hook] = tooled.hook_runs("postToolUse")
        assert tool_hook["status"] == "completed", tool_hook
        states = {
            e["id"]: e["deliveryState"] for e in listed_events(trusted, codex_env, record["id"])
        }
        assert states[normal["id"]] == "claimed", states

        low = change_and_wait(
            trusted, codex_env, record["id"], trusted / "guides" / LOW_FILE, "- spaces\n"
        )
        assert low["urgency"] == "low", low
        third = server.turn("and now")
        before, continuation = turn_requests(fake_api, third)
        assert around_prompt(before, "and now") == ([], []), "low waits for the end of turn"
        assert not any(STOP_REASON in text for text in texts(before, "user"))
        hook_prompts = [t for t in texts(continuation, "user") if STOP_REASON in t]
        assert len(hook_prompts) == 1, texts(continuation, "user")
        assert hook_prompts[0].startswith("<hook_prompt hook_run_id=")
        assert len(third.hook_runs("stop")) == 2  # blocked once, then let the turn end
        states = {
            e["id"]: e["deliveryState"] for e in listed_events(trusted, codex_env, record["id"])
        }
        assert states[low["id"]] == "claimed", states

        # Acknowledged, so the recap can show only what comes next: a normal change (a
        # recap shows what is unread whatever its urgency; no settle to wait out).
        agentmonitors(trusted, codex_env, "events", "ack", "--session", record["id"])
        normal_change(trusted, codex_env, record["id"], "1. build\n2. and the notes\n")
        compaction = server.compact()
        assert len(turn_requests(fake_api, compaction)) == 1  # the summary request
        fourth = server.turn("after compact")
        requests = [r for r in turn_requests(fake_api, fourth) if "after compact" in r.raw]
        assert requests, "turn 4 reached the fake API"
        at_start, at_prompt = around_prompt(requests[0], "after compact")
        assert at_start, f"no compact recap: {texts(requests[0], 'developer')}"
        assert RUNBOOK in at_start[-1] and WATCHED not in at_start[-1], at_start[-1]
        assert at_prompt == []
        [compact_start] = fourth.hook_runs("sessionStart")
        assert compact_start["status"] == "completed", compact_start
    # Codex has no SessionEnd: closing the app server leaves the session to idle expiry.
    assert daemon_session(trusted, codex_env, thread_id)["status"] == "active"
    only_model_traffic(fake_api)

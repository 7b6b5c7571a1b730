"""The codex-queue transport: what a queued Codex wake says, and how its turn proves it.

A queued message reaches the model as a plain user item, so it says itself who speaks;
the woken turn's UserPromptSubmit prompt is that text, whose tag proves the delivery:
the hook then delivers nothing again. See docs/architecture.md, "Transports".
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon import codex_wake
from agentmonitors.daemon.codex_probe import ThreadState, _is_tui
from agentmonitors.daemon.codex_wake import RETRY_S, CodexWaker
from agentmonitors.delivery.codex_queue_text import HEAD, TAG_PREFIX, queued_delivery_ids
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.transports.codex_queue import TRANSPORT, wake_key
from agentmonitors.delivery.transports.health import Expected, Lead
from agentmonitors.transports.hosts.codex import ADAPTER as CODEX
from agentmonitors.workspace import enable_file_path

from .conftest import World

SOCKET = "/tmp/agentmonitors-test.sock"
THREAD = "01a24e19-c901-7011-ac92-0adddf03ada9"


def codex_session(world: World, host: str = THREAD) -> str:
    record = world.service.open_session(host, adapter="codex", workspace_path=world.workspace)
    return str(record["id"])


def queue(world: World, host: str = THREAD) -> dict[str, Any]:
    """What the daemon's runner reserves, then reports sent (``codex queue`` exited 0)."""
    reply = TRANSPORT.reserve_rendered(world.service, {"hostSessionId": host, "socketPath": SOCKET})
    if reply.get("reservation") is not None:
        assert world.service.channel_sent(reply["deliveryId"])
    return reply


def prompt_hook(world: World, prompt: str, host: str = THREAD) -> dict[str, Any]:
    """The woken turn's UserPromptSubmit, as ``hook deliver --host codex`` asks."""
    payload = CODEX.normalise(
        {"session_id": host, "hook_event_name": "UserPromptSubmit", "cwd": "/p", "prompt": prompt}
    )
    return dict(
        reserve_rendered(
            world.service,
            host,
            "turn-interruptible",
            socket_path=SOCKET,
            channel_delivery_ids=payload.channel_delivery_ids,
        )
    )


def test_the_queued_text_says_who_speaks_names_the_monitor_and_ends_with_its_tag(
    world: World,
) -> None:
    session = codex_session(world)
    assert TRANSPORT.serves(world.service.get_session(session))
    world.emit("normal", "Docs changed", monitor="docs")
    assert wake_key(world.service, session)
    reply = queue(world)
    text = reply["text"]
    assert text.startswith(HEAD) and "not from the user" in text
    assert "docs changed while you were idle" in text
    assert f"agentmonitors events ack --session {session}" in text
    assert text.endswith(f"{TAG_PREFIX}{reply['deliveryId']}]")
    # Held while it waits for its turn: nothing is pending for another wake.
    assert wake_key(world.service, session) == ()


def test_the_woken_prompt_proves_the_delivery_and_the_hook_adds_nothing(world: World) -> None:
    session = codex_session(world)
    event = world.emit("normal", "Docs changed", monitor="docs")
    reply = queue(world)
    answered = prompt_hook(world, reply["text"])
    assert answered["confirmedDeliveryIds"] == [reply["deliveryId"]]
    assert answered["reservation"] is None and answered["text"] == ""
    assert world.claimed_ids(session) == {event}


def test_a_typed_prompt_proves_nothing_and_the_hook_delivers_what_was_queued(
    world: World,
) -> None:
    codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    reply = queue(world)
    answered = prompt_hook(world, "please go on " + reply["text"])
    assert answered["confirmedDeliveryIds"] == []
    # The never-confirmed queue is voided: the hook is the path that surely shows.
    assert answered["reservation"] is not None
    assert "Monitored changes are pending" in answered["text"]


def test_only_the_last_line_tag_of_our_own_text_counts() -> None:
    assert queued_delivery_ids(f"{HEAD} x\n\nbody\n\n{TAG_PREFIX}01ABC]") == ("01ABC",)
    # A tag quoted inside the delivered text (a watched file may hold one) is not read.
    assert queued_delivery_ids(f"{HEAD} x\n\n{TAG_PREFIX}01ABC]\nmore") == ()
    assert queued_delivery_ids(f"typed\n{TAG_PREFIX}01ABC]") == ()
    assert queued_delivery_ids(f"{HEAD} x\n{TAG_PREFIX}01 A]") == ()
    assert queued_delivery_ids(None) == ()
    stop = CODEX.normalise(
        {"session_id": THREAD, "hook_event_name": "Stop", "prompt": f"{HEAD}\n{TAG_PREFIX}1]"}
    )
    assert stop.channel_delivery_ids == ()


def test_a_released_queue_leaves_the_events_to_the_hooks(world: World) -> None:
    """``codex queue`` failed or timed out: the runner releases, nothing is lost."""
    session = codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    reply = TRANSPORT.reserve_rendered(
        world.service, {"hostSessionId": THREAD, "socketPath": SOCKET}
    )
    world.service.release(reply["deliveryId"])
    assert wake_key(world.service, session)
    hook = reserve_rendered(world.service, THREAD, "turn-interruptible", socket_path=SOCKET)
    assert hook["reservation"] is not None


def test_only_codex_leads_are_served(world: World) -> None:
    claude = world.session("claude-1")
    assert not TRANSPORT.serves(world.service.get_session(claude))


def test_without_a_codex_daemon_nothing_is_reserved(world: World, tmp_path: Path) -> None:
    """A ``--no-daemon`` TUI (or none running): no control socket, so no wake; the
    hooks keep the events."""
    session = codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    home = tmp_path / "codex-home"
    home.mkdir()
    waker = CodexWaker(
        world.service, world.workspace, SOCKET, {"CODEX_HOME": str(home), "PATH": ""}
    )
    assert asyncio.run(waker.wake_idle()) == 0
    assert wake_key(world.service, session)


def test_a_tui_is_a_foreground_codex_on_the_managed_daemon() -> None:
    assert _is_tui(["codex"])
    assert _is_tui(["node", "/x/node_modules/.bin/codex", "resume", THREAD])
    assert _is_tui(["/x/bin/codex", "fix the build"])
    assert not _is_tui(["/x/bin/codex", "--no-daemon"])
    assert not _is_tui(["/x/bin/codex", "app-server", "--listen", "unix://"])
    assert not _is_tui(["/x/bin/codex", "queue", "--thread", THREAD, "--message", "m"])
    assert not _is_tui(["/x/bin/codex", "exec", "hi"])
    assert not _is_tui(["python", "-m", "agentmonitors"])


def test_doctor_shows_the_wakes_of_codex_leads_and_expects_none() -> None:
    expected = Expected("/ws", SOCKET, "/home/u", "/data", "1.0", 1_780_000_000_000)
    lead = Lead("S1", THREAD, host="codex")
    assert TRANSPORT.doctor([], [lead], expected).problems == []
    record = {
        "hostSessionId": THREAD,
        "workspacePath": "/elsewhere",
        "socketPath": SOCKET,
        "home": "/home/u",
        "dataRoot": "/data",
        "version": "1.0",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "ttlMs": 1,
    }
    health = TRANSPORT.doctor([record], [lead], expected)
    assert health.configured
    # Old by nature (written only when it wakes), but bound to another workspace.
    assert [problem["code"] for problem in health.problems] == ["workspace-mismatch"]


class FakeCodex:
    """Codex's side of a wake, as the runner sees it: the probe and ``codex queue``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, tui: bool = True, rc: int = 0) -> None:
        self.queued: list[tuple[str, str]] = []
        self.homes: list[str] = []  # the CODEX_HOME of each probe, TUI check and queue
        self.rc = rc

        async def state(home: str, thread: str) -> ThreadState:
            self.homes.append(home)
            return ThreadState(True, "/project")

        def holds(home: str, folder: str) -> bool:
            self.homes.append(home)
            return tui

        async def queue(waker: CodexWaker, thread: str, text: str, home: str) -> bool:
            self.homes.append(home)
            self.queued.append((thread, text))
            return self.rc == 0

        monkeypatch.setattr(codex_wake, "thread_state", state)
        monkeypatch.setattr(codex_wake, "tui_holds", holds)
        monkeypatch.setattr(CodexWaker, "_queue", queue)


def waker(world: World) -> CodexWaker:
    return CodexWaker(world.service, world.workspace, SOCKET, {"CODEX_HOME": "/c", "PATH": ""})


def test_the_runner_queues_once_and_waits_for_the_proof(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    codex = FakeCodex(monkeypatch)
    runner = waker(world)
    assert asyncio.run(runner.wake_idle()) == 1
    [(thread, text)] = codex.queued
    assert thread == THREAD and text.startswith(HEAD)
    # Sent and held for its proof: the next pass queues nothing more.
    assert asyncio.run(runner.wake_idle()) == 0 and len(codex.queued) == 1
    assert prompt_hook(world, text)["confirmedDeliveryIds"]
    assert world.claimed_ids(session)


def test_a_thread_is_probed_and_queued_under_the_codex_home_it_started_with(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon was started with one CODEX_HOME (``/c``), the thread with another: its
    SessionStart hook, run in the thread's environment, recorded that one."""
    codex_session(world)
    other = codex_session(world, host="other-thread")
    world.emit("normal", "Docs changed", monitor="docs")
    CODEX.record_session_environment(THREAD, {"CODEX_HOME": "/home/u/work-codex", "HOME": "/h"})
    codex = FakeCodex(monkeypatch)
    assert asyncio.run(waker(world).wake_idle()) == 2
    threads = [thread for thread, _ in codex.queued]
    assert sorted(threads) == sorted([THREAD, "other-thread"])
    # Each step for the recorded thread under its home; the one that recorded nothing
    # (a start before this was recorded) under the daemon's own.
    home_of = {THREAD: "/home/u/work-codex", "other-thread": "/c"}
    assert codex.homes == [home_of[thread] for thread in threads for _step in range(3)]
    assert world.service.get_session(other)["hostSessionId"] == "other-thread"


def test_a_codex_session_start_records_its_codex_home(tmp_path: Path) -> None:
    """Relative or defaulted, the recorded home is absolute; other hosts record nothing."""
    from agentmonitors.delivery.codex_home import session_home
    from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE

    CODEX.record_session_environment("t1", {"HOME": str(tmp_path)})
    assert session_home("t1") == str(tmp_path / ".codex")
    CLAUDE_CODE.record_session_environment("t2", {"CODEX_HOME": "/x"})
    assert session_home("t2") is None


def test_a_failed_queue_leaves_the_events_to_the_hooks(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    FakeCodex(monkeypatch, rc=1)
    assert asyncio.run(waker(world).wake_idle()) == 0
    assert wake_key(world.service, session)
    hook = reserve_rendered(world.service, THREAD, "turn-interruptible", socket_path=SOCKET)
    assert "Monitored changes are pending" in hook["text"]


def test_no_tui_or_live_off_queues_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    codex = FakeCodex(monkeypatch, tui=False)
    assert asyncio.run(waker(world).wake_idle()) == 0
    codex = FakeCodex(monkeypatch)
    enable = Path(enable_file_path(world.workspace))
    enable.parent.mkdir(parents=True, exist_ok=True)
    enable.write_text("---\nenabled: true\nlive: off\n---\n", encoding="utf-8")
    assert asyncio.run(waker(world).wake_idle()) == 0
    assert codex.queued == []


def test_wake_high_leaves_a_normal_change_to_the_next_prompt(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = codex_session(world)
    world.emit("normal", "Docs changed", monitor="docs")
    codex = FakeCodex(monkeypatch)
    enable = Path(enable_file_path(world.workspace))
    enable.parent.mkdir(parents=True, exist_ok=True)
    enable.write_text("---\nenabled: true\nwake: high\n---\n", encoding="utf-8")
    assert asyncio.run(waker(world).wake_idle()) == 0
    assert codex.queued == []
    # Still the next prompt's to deliver.
    hook = reserve_rendered(world.service, THREAD, "turn-interruptible", socket_path=SOCKET)
    assert "Monitored changes are pending" in hook["text"]
    assert not world.claimed_ids(session)


def test_the_runner_sets_a_timer_only_for_what_time_alone_makes_deliverable(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No poll: with nothing pending it waits for a nudge; a high event still settling
    is looked at when its window ends; a thread that did not take a wake, 2 s later."""
    codex_session(world)
    runner = waker(world)
    asyncio.run(runner.wake_idle())
    assert runner.next_look_s is None
    world.emit("high", "Deploy failed", monitor="deploy")
    world.advance(5_000)
    asyncio.run(runner.wake_idle())
    assert runner.next_look_s == 10.0
    world.advance(10_000)
    FakeCodex(monkeypatch, tui=False)  # settled, but no TUI takes it
    assert asyncio.run(runner.wake_idle()) == 0
    assert runner.next_look_s == RETRY_S

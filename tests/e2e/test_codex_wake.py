"""The real Codex TUI, offline under tmux: a change wakes the idle thread with no prompt.

Codex 0.169's interactive TUI runs its thread on a managed app-server daemon (the first
start copies ~400 MB into ``<CODEX_HOME>/packages/``, so this module starts one TUI in
one ``CODEX_HOME``). After one typed prompt the thread is idle; a change to a watched
file then reaches a new model request with no prompt typed, because the agentmonitors
daemon ran ``codex queue`` (the codex-queue transport). The request holds our text
(from agentmonitors, not the user; the monitor; the ack command), the woken turn's
UserPromptSubmit hook delivers nothing again, and neither does the next typed prompt.
The agentmonitors daemon was started from another ``CODEX_HOME`` than the TUI's: it
probes and queues under the one the thread's SessionStart recorded.
Once the TUI has closed (Codex's daemon still holds the thread), a change queues nothing.
The change → request latency is printed. See ``codex_cli.py`` for where the CLI comes
from (skipped without it unless real clients are required, as in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.codex_queue_text import HEAD, TAG_PREFIX
from tests.e2e.claude_code import kill_pids, processes_mentioning, wait_for_no_processes
from tests.e2e.codex_app_server import trust_hooks
from tests.e2e.codex_cli import (
    Codex,
    CodexUnavailable,
    isolated_env,
    locate_codex,
    skip_or_fail,
    write_config,
)
from tests.e2e.fake_responses_api import FakeResponsesApi, LoggedRequest
from tests.e2e.test_real_codex import agentmonitors, install_hooks, sessions

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

MONITOR = """---
name: Checklist changed
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: normal
---
The deploy checklist changed. Read it before going on.
"""
REMINDER = "Monitored changes are pending."
WAIT_S = 60.0
# The first start in a fresh CODEX_HOME copies ~400 MB before the TUI takes a prompt.
FIRST_PROMPT_WAIT_S = 180.0
CLOSED_QUIET_S = 4.0  # a wake comes within a second; this is four runs of the runner's retry


def _texts(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(part.get("text", "")) for part in parts if isinstance(part, dict))


def _items(request: LoggedRequest, role: str) -> list[str]:
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("input")
    return [
        _texts(item)
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and item.get("role") == role
    ]


class Tui:
    """One Codex TUI in its own tmux server."""

    def __init__(self, socket: Path, codex: Codex, cwd: Path, env: Mapping[str, str]) -> None:
        self.socket = str(socket)
        exports = [arg for name, value in env.items() for arg in ("-e", f"{name}={value}")]
        self.tmux(
            "new-session", "-d", "-x", "200", "-y", "50", *exports, "-c", str(cwd), codex.path
        )

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while text not in self.screen():
            if time.monotonic() > deadline:
                pytest.fail(f"the TUI never showed {text!r}:\n{self.screen()}")
            time.sleep(0.2)

    def type(self, prompt: str) -> None:
        self.tmux("send-keys", "-l", prompt)
        time.sleep(0.3)  # typed text and Enter together read as a paste
        self.tmux("send-keys", "Enter")

    def close(self) -> None:
        self.tmux("kill-server")


def _requests_after(api: FakeResponsesApi, count: int, what: str) -> list[LoggedRequest]:
    deadline = time.monotonic() + WAIT_S
    while len(api.response_requests()) <= count:
        if time.monotonic() > deadline:
            pytest.fail(f"no model request {what} within {WAIT_S}s")
        time.sleep(0.02)
    return api.response_requests()[count:]


def _first_prompt(tui: Tui, api: FakeResponsesApi, prompt: str) -> None:
    """Type the first prompt until Codex sends it. A first start in a fresh CODEX_HOME
    copies its binaries and connects to its daemon while the composer already shows, and
    on a loaded machine an Enter pressed then is lost: pressing it again on an empty
    composer does nothing, so it is pressed until a request arrives."""
    tui.type(prompt)
    deadline = time.monotonic() + FIRST_PROMPT_WAIT_S
    pressed = time.monotonic()
    while not api.response_requests():
        if time.monotonic() > deadline:
            pytest.fail(f"no model request for the typed prompt:\n{tui.screen()}")
        if time.monotonic() - pressed > 10:
            tui.tmux("send-keys", "Enter")
            pressed = time.monotonic()
        time.sleep(0.2)


def _wait_idle(tui: Tui) -> None:
    """The turn answered and the prompt is back (its Stop hook has run by then)."""
    tui.wait_for("Worked for")
    time.sleep(1.5)


@pytest.fixture
def codex() -> Codex:
    if shutil.which("tmux") is None:
        skip_or_fail(CodexUnavailable("no tmux to drive the Codex TUI"))
    try:
        return locate_codex()
    except CodexUnavailable as error:
        skip_or_fail(error)


@pytest.fixture
def setup(codex: Codex, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], FakeResponsesApi]]:
    """An enabled project with a normal file monitor and our trusted Codex hooks."""
    home = Path(os.environ["HOME"])
    codex_home = home / ".codex"
    with FakeResponsesApi(tmp_path / "api-requests.jsonl") as api:
        env = isolated_env(home, codex_home, api.base_url.removesuffix("/v1"))
        # The daemon finds `codex` on the PATH the hooks hand it.
        env["PATH"] = os.pathsep.join([os.path.dirname(codex.path), env["PATH"]])
        env["TERM"] = "xterm-256color"
        project = tmp_path / "project"
        (project / "notes").mkdir(parents=True)
        (project / "notes" / "deploy.txt").write_text("- tag the release\n", encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
        agentmonitors(project, env, "init", "--enable-only")
        monitor = project / ".claude" / "monitors" / "checklist" / "MONITOR.md"
        monitor.parent.mkdir(parents=True)
        monitor.write_text(MONITOR, encoding="utf-8")
        install_hooks(project, env)
        write_config(codex_home, api.base_url, [project])
        assert trust_hooks(codex, project, env, codex_home) == 4
        try:
            yield project, env, api
        finally:
            agentmonitors(project, env, "daemon", "stop", check=False)
            subprocess.run(
                [codex.path, "app-server", "daemon", "stop"],
                env=env,
                capture_output=True,
                timeout=60,
                check=False,
            )
            # Codex 0.169's `pid-update-loop` helper outlives `daemon stop` by far more
            # than the 10 s below: ended at once, it no longer holds the test up.
            kill_pids(
                [
                    pid
                    for pid, command in processes_mentioning(str(codex_home))
                    if "pid-update-loop" in command
                ]
            )
            alive = wait_for_no_processes(str(codex_home), timeout=10)
            kill_pids([pid for pid, _ in alive])


def test_a_change_wakes_the_idle_codex_tui_once(
    codex: Codex, setup: tuple[Path, dict[str, str], FakeResponsesApi], tmp_path: Path
) -> None:
    project, env, api = setup
    # The agentmonitors daemon runs from an environment with another CODEX_HOME (a
    # shell's default ~/.codex, say); the thread's SessionStart hook records its own.
    elsewhere = {**env, "CODEX_HOME": str(tmp_path / "another-codex-home")}
    agentmonitors(project, elsewhere, "daemon", "start")
    tui = Tui(tmp_path / "tmux.sock", codex, project, env)
    try:
        tui.wait_for("Ask Codex")
        _first_prompt(tui, api, "hello")
        _wait_idle(tui)
        [session] = [s for s in sessions(project, env) if s["adapter"] == "codex"]

        before = len(api.response_requests())
        changed_at = time.time()
        (project / "notes" / "deploy.txt").write_text("- tag the release\n- ship\n", "utf-8")
        woken = _requests_after(api, before, "after the change (no prompt typed)")[0]
        latency = woken.time - changed_at
        print(f"\ncodex-queue wake: change -> model request {latency:.2f}s")

        [ours] = [text for text in _items(woken, "user") if text.startswith(HEAD)]
        assert "not from the user" in ours and "checklist" in ours, ours
        assert f"agentmonitors events ack --session {session['id']}" in ours, ours
        assert ours.rstrip().rpartition("\n")[2].startswith(TAG_PREFIX), ours
        # The woken turn's UserPromptSubmit proved the queued delivery: no hook context
        # repeats it in that request.
        assert not [text for text in _items(woken, "developer") if REMINDER in text], woken.body
        _wait_idle(tui)

        before = len(api.response_requests())
        tui.type("next")
        typed = _requests_after(api, before, "for the next typed prompt")[0]
        assert not [t for t in _items(typed, "developer") if REMINDER in t], typed.body
        woken_turns = [
            r for r in api.response_requests() if any(t.startswith(HEAD) for t in _items(r, "user"))
        ]
        assert woken_turns[0] is woken and "next" in _items(typed, "user")[-1], typed.body
        unread = json.loads(
            agentmonitors(
                project,
                env,
                "events",
                "list",
                "--session",
                session["id"],
                "--unread",
                "--format",
                "json",
            ).stdout
        )
        assert len(unread) == 1, unread  # delivered, not acknowledged: still unread
        _wait_idle(tui)

        # The TUI closes; Codex's daemon keeps the thread loaded and would run a queued
        # turn unseen. Nothing is queued: the change waits for the hooks.
        agentmonitors(project, env, "events", "ack", "--session", session["id"])
        tui.close()
        before = len(api.response_requests())
        (project / "notes" / "deploy.txt").write_text("- tag the release\n- ship\n- 3\n", "utf-8")
        deadline = time.monotonic() + WAIT_S
        while not _listed(project, env, session["id"]):
            assert time.monotonic() < deadline, "the change was never stored"
            time.sleep(0.2)
        time.sleep(CLOSED_QUIET_S)
        assert len(api.response_requests()) == before, api.response_requests()[before:]
        [pending] = _listed(project, env, session["id"])
        assert pending["urgency"] == "normal", pending
    finally:
        tui.close()


def _listed(project: Path, env: Mapping[str, str], session_id: str) -> list[dict[str, Any]]:
    """The session's unread events."""
    listed = agentmonitors(
        project, env, "events", "list", "--session", session_id, "--unread", "--format", "json"
    )
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found

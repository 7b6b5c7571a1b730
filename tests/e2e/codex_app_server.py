"""``codex app-server``, driven over stdio: several turns in one thread, compaction on
demand, and Codex's own view of the hooks it found (and trusted) for a folder.

The app server is the JSON-RPC front end of the same Codex engine ``codex exec`` and the
terminal UI run; its ``hook/completed`` notifications say which hooks ran in a turn.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.e2e.claude_code import parse_events
from tests.e2e.codex_cli import TURN_TIMEOUT_S, Codex, CodexError, toml_string
from tests.e2e.npm_client import kill_group


@dataclass
class TurnRecord:
    """What the app server said during one turn, up to its ``turn/completed``."""

    text: str
    notifications: list[dict[str, Any]]
    first_request: int
    seconds: float

    def hook_runs(self, event: str) -> list[dict[str, Any]]:
        """The ``run`` objects of this turn's completed hooks for ``event`` (camelCase)."""
        return [
            n["params"]["run"]
            for n in self.notifications
            if n.get("method") == "hook/completed"
            and n.get("params", {}).get("run", {}).get("eventName") == event
        ]


@dataclass
class AppServer:
    """``codex app-server``: the JSON-RPC front end of the Codex engine, over stdio.

    One process can hold one thread (a Codex session) over several turns, which
    ``codex exec`` cannot: a second ``exec resume`` starts a new process whose
    SessionStart (``source: resume``) would show a change as the recap, never at the
    next prompt. Use as a context manager; the process group is always killed on exit.
    """

    codex: Codex
    cwd: Path
    env: Mapping[str, str]
    stderr_path: Path
    request_mark: Any = None  # the fake API's ``mark``
    args: Sequence[str] = ()
    log: list[dict[str, Any]] = field(default_factory=list)
    _process: subprocess.Popen[str] | None = None
    _lines: queue.Queue[object] = field(default_factory=queue.Queue)
    _next_id: int = 1
    _pump_thread: threading.Thread | None = None
    thread_id: str | None = None

    def __enter__(self) -> AppServer:
        stderr = self.stderr_path.open("w", encoding="utf-8")
        self._process = subprocess.Popen(
            [self.codex.path, "app-server", *self.args],
            cwd=self.cwd,
            env=dict(self.env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        stderr.close()
        self._pump_thread = threading.Thread(
            target=self._pump, name="codex-app-server", daemon=True
        )
        self._pump_thread.start()
        self.request("initialize", {"clientInfo": {"name": "agentmonitors-e2e", "version": "1"}})
        self.notify("initialized")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _pump(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _write(self, message: dict[str, Any]) -> None:
        process = self._process
        assert process is not None and process.stdin is not None, "not started"
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._write({"method": method, **({"params": params} if params is not None else {})})

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while True:
            try:
                item = self._lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                raise CodexError(f"no {waiting_for} in time\n{self.describe()}") from None
            if item is None:
                self._lines.put(None)
                raise CodexError(f"the app server exited before {waiting_for}\n{self.describe()}")
            assert isinstance(item, str)
            for message in parse_events(item):
                self.log.append(message)
                return message

    def request(
        self, method: str, params: dict[str, Any], timeout: float = TURN_TIMEOUT_S
    ) -> dict[str, Any]:
        request_id = self._next_id
        self._next_id += 1
        self._write({"id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline, f"answer to {method}")
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise CodexError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message.get("result") or {}
                return result

    def start_thread(self) -> str:
        result = self.request("thread/start", {"cwd": str(self.cwd)})
        self.thread_id = str(result["thread"]["id"])
        return self.thread_id

    def turn(self, text: str, timeout: float = TURN_TIMEOUT_S) -> TurnRecord:
        """Send one user message and collect notifications until ``turn/completed``."""
        assert self.thread_id is not None, "start_thread first"
        mark = self.request_mark() if self.request_mark is not None else -1
        started = time.monotonic()
        before = len(self.log)
        self.request(
            "turn/start",
            {"threadId": self.thread_id, "input": [{"type": "text", "text": text}]},
        )
        deadline = started + timeout
        while True:
            message = self._next(deadline, f"turn/completed of {text!r}")
            if message.get("method") == "turn/completed":
                break
        return TurnRecord(text, self.log[before:], mark, time.monotonic() - started)

    def compact(self, timeout: float = TURN_TIMEOUT_S) -> TurnRecord:
        """Compact the thread now (``/compact``), and wait until that turn has ended."""
        assert self.thread_id is not None, "start_thread first"
        mark = self.request_mark() if self.request_mark is not None else -1
        started = time.monotonic()
        before = len(self.log)
        self.request("thread/compact/start", {"threadId": self.thread_id})
        deadline = started + timeout
        while self._next(deadline, "the compaction's turn/completed").get("method") != (
            "turn/completed"
        ):
            pass
        return TurnRecord("/compact", self.log[before:], mark, time.monotonic() - started)

    def describe(self) -> str:
        tail = "\n".join(json.dumps(m)[:400] for m in self.log[-30:])
        try:
            stderr = self.stderr_path.read_text(encoding="utf-8", errors="replace")[-3000:]
        except OSError:
            stderr = ""
        return f"--- app-server messages (last) ---\n{tail}\n--- stderr ---\n{stderr}"

    def close(self) -> None:
        process = self._process
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        kill_group(process)
        if self._pump_thread is not None:
            self._pump_thread.join(timeout=5)
        if process.stdout is not None and not (self._pump_thread and self._pump_thread.is_alive()):
            process.stdout.close()
        self._process = None


def hook_trust_entries(codex: Codex, cwd: Path, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Codex's own list of the hooks it found for ``cwd``, with keys, hashes and trust."""
    with AppServer(codex, cwd, env, cwd.parent / "codex-hooks-list-stderr.txt") as server:
        result = server.request("hooks/list", {"cwds": [str(cwd)]})
    entries: list[dict[str, Any]] = [
        hook for folder in result.get("data", []) for hook in folder.get("hooks", [])
    ]
    return entries


def trust_hooks(codex: Codex, cwd: Path, env: Mapping[str, str], codex_home: Path) -> int:
    """Record trust for every hook Codex lists for ``cwd``, the way its ``/hooks`` does.

    Codex keeps the trust of an unmanaged hook in the user config as
    ``[hooks.state."<key>"] trusted_hash = "<hash>"``; the key and hash are Codex's
    own (``hooks/list``), never computed here. Returns how many hooks were trusted.
    """
    entries = [e for e in hook_trust_entries(codex, cwd, env) if e.get("trustStatus") != "managed"]
    lines = [
        f"\n[hooks.state.{toml_string(str(e['key']))}]\n"
        f"trusted_hash = {toml_string(str(e['currentHash']))}\n"
        for e in entries
    ]
    with (codex_home / "config.toml").open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return len(entries)

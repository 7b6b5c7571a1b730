"""Find (or install) the real Claude Code CLI and run it offline with our plugin.

Where the binary comes from, in order:

1. ``$AGENTMONITORS_CLAUDE_BIN``, if set (it must run; a broken value is an error);
2. ``claude`` on PATH, if its ``--version`` reports 2.1.x;
3. ``npm install --prefix <repo>/.cache/claude-code @anthropic-ai/claude-code@<pinned>``,
   reused by later runs while the cached version matches the pin.

When none of these works (no npm, no network, a failed install) the tests skip with
:class:`ClaudeCodeUnavailable`'s reason, unless ``$AGENTMONITORS_REQUIRE_CLAUDE`` is ``1``
(CI sets it): then they fail with that reason, so a run that never reached the real
client cannot pass as green.

Every run gets the isolated environment of :func:`isolated_env` and loads the plugin from the
repository root with ``--plugin-dir``; every process is started in its own process group
and that group is killed when the run ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, TextIO

import pytest

from tests.e2e import npm_client

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO_ROOT  # .claude-plugin/plugin.json, hooks/, skills/ and .mcp.json live here
CACHE_DIR = REPO_ROOT / ".cache" / "claude-code"
BIN_ENV = "AGENTMONITORS_CLAUDE_BIN"
REQUIRE_ENV = "AGENTMONITORS_REQUIRE_CLAUDE"
PACKAGE = "@anthropic-ai/claude-code"
# Pinned, not "2.1": 2.1.198 and later declare `engines: {node: ">=22"}`, and npm's
# engine-aware resolution then picks 2.1.197 on Node 20. The binary is native, so the
# pinned version (the one these tests were written against) runs on any Node; npm only warns.
PINNED_VERSION = "2.1.332"
SUPPORTED_LINE = re.compile(r"^2\.1\.\d+$")
VERSION_RE = re.compile(r"(\d+\.\d+\.\d+)")

TURN_TIMEOUT_S = 120.0
EXIT_GRACE_S = 30.0  # closing stdin lets Claude Code run SessionEnd before it exits

# With all five, `claude -p` opens exactly one connection, to the fake API.
OFFLINE_VARIABLES = (
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "DISABLE_ERROR_REPORTING",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL",
)
# The only variables taken from the caller's environment; everything else is built.
PASSED_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER", "LOGNAME", "TZ")
DUMMY_API_KEY = "sk-ant-api03-agentmonitors-e2e-dummy-key"


class ClaudeCodeUnavailable(Exception):
    """No usable Claude Code CLI here; the message says why (a skip reason)."""


class ClaudeCodeError(AssertionError):
    """Claude Code ran but did not behave (timeout, early exit, no result)."""


@dataclass(frozen=True)
class ClaudeCode:
    path: str
    version: str
    source: str  # "env", "path", "cache" or "npm install"
    install_seconds: float | None = None
    install_bytes: int | None = None


# ------------------------------------------------------------------------ locating


def venv_bin() -> str:
    """The folder of the running interpreter: where ``agentmonitors`` is installed."""
    return os.path.dirname(sys.executable)


def _bare_env(home: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update({"HOME": home, "PATH": os.environ.get("PATH", os.defpath)})
    env.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
    return env


def binary_version(path: str) -> str | None:
    """``<path> --version``'s x.y.z, run with a throw-away HOME; None if it does not run."""
    return npm_client.binary_version(path, VERSION_RE, _bare_env)


def install_with_npm(cache: Path = CACHE_DIR, version: str = PINNED_VERSION) -> ClaudeCode:
    """The cached install if it has ``version``, else a fresh ``npm install`` into ``cache``."""
    try:
        found = npm_client.cached_or_installed(cache, PACKAGE, version, "claude", binary_version)
    except npm_client.NpmInstallFailed as error:
        raise ClaudeCodeUnavailable(
            f"Claude Code CLI not found: set {BIN_ENV} or put a 2.1.x `claude` on PATH; {error}"
        ) from None
    return ClaudeCode(*found)


def locate_claude_code() -> ClaudeCode:
    """The CLI to test with; :class:`ClaudeCodeUnavailable` when there is none."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        version = binary_version(explicit)
        if version is None:
            # An explicit choice that does not run is a configuration error, not a skip.
            raise ClaudeCodeError(f"{BIN_ENV}={explicit!r}: `--version` does not run")
        return ClaudeCode(explicit, version, "env")
    on_path = shutil.which("claude")
    if on_path is not None:
        version = binary_version(on_path)
        if version is not None and SUPPORTED_LINE.match(version):
            return ClaudeCode(on_path, version, "path")
    return install_with_npm()


def skip_or_fail(reason: ClaudeCodeUnavailable) -> NoReturn:
    """Skip the test, or fail it when this run requires the real client."""
    required = os.environ.get(REQUIRE_ENV, "")
    if required not in ("", "0"):
        pytest.fail(
            f"{REQUIRE_ENV}={required}: Claude Code is required but unavailable: {reason}"
            f" (set {REQUIRE_ENV}=0 to skip these tests instead)",
            pytrace=False,
        )
    pytest.skip(str(reason))


# ------------------------------------------------------------------------ environment


def isolated_env(home: Path, base_url: str, xdg_data_home: Path | None = None) -> dict[str, str]:
    """An environment that reaches nothing but the fake API, plus our venv first on PATH
    so the plugin's hooks find ``agentmonitors``."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    data = xdg_data_home if xdg_data_home is not None else home / ".local" / "share"
    env.update(
        {
            "HOME": str(home),
            "PATH": os.pathsep.join([venv_bin(), os.environ.get("PATH", os.defpath)]),
            "XDG_DATA_HOME": str(data),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        }
    )
    env.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
    return env


def claude_argv(
    claude: ClaudeCode, args: Sequence[str], plugin_dir: Path = PLUGIN_DIR
) -> list[str]:
    return [claude.path, *args, "--plugin-dir", str(plugin_dir)]


# ------------------------------------------------------------------------ processes


def parse_events(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a stream-json output, one a line (other lines are skipped)."""
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            item = json.loads(line)
            if isinstance(item, dict):
                events.append(item)
    return events


@dataclass
class PrintRun:
    """One finished ``claude -p``."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def events(self) -> list[dict[str, Any]]:
        return parse_events(self.stdout)

    @property
    def result(self) -> dict[str, Any]:
        """The ``result`` object (the whole output for ``--output-format json``)."""
        results = [event for event in self.events if event.get("type") == "result"]
        if results:
            return results[-1]
        raise ClaudeCodeError(f"no result in the output of {self.argv}:\n{self.describe()}")

    def describe(self) -> str:
        return (
            f"exit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )


def run_print(
    claude: ClaudeCode,
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    args: Sequence[str] = ("--output-format", "json"),
    timeout: float = TURN_TIMEOUT_S,
) -> PrintRun:
    """``claude -p <prompt> <args> --plugin-dir <repo>`` once, with a timeout."""
    argv = claude_argv(claude, ["-p", prompt, *args])
    try:
        returncode, stdout, stderr, seconds = npm_client.run_to_end(
            argv, cwd=cwd, env=env, timeout=timeout
        )
    except npm_client.TimedOut as late:
        run = PrintRun(argv, -1, late.stdout, late.stderr, late.seconds)
        raise ClaudeCodeError(f"claude -p timed out after {timeout}s\n{run.describe()}") from None
    return PrintRun(argv, returncode, stdout, stderr, seconds)


_EOF = object()


@dataclass
class Turn:
    """The stdout events of one user turn, up to and including its ``result``."""

    prompt: str
    events: list[dict[str, Any]]
    first_request: int  # the fake API's request index when the turn was sent
    seconds: float

    @property
    def result(self) -> dict[str, Any]:
        return self.events[-1]

    def hook_responses(self, hook_event: str) -> list[dict[str, Any]]:
        return [
            event
            for event in self.events
            if event.get("subtype") == "hook_response" and event.get("hook_event") == hook_event
        ]


@dataclass
class StreamSession:
    """ONE ``claude -p --input-format stream-json`` process driven turn by turn.

    Use as a context manager; the process group is always killed on exit.
    """

    claude: ClaudeCode
    cwd: Path
    env: Mapping[str, str]
    session_id: str
    stderr_path: Path
    extra_args: Sequence[str] = ()
    stdout_path: Path | None = None  # where the raw stdout lines are saved on close
    request_mark: Callable[[], int] | None = None  # the fake API's next request index
    turns: list[Turn] = field(default_factory=list)
    all_events: list[dict[str, Any]] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)
    returncode: int | None = None
    _process: subprocess.Popen[str] | None = None
    _lines: queue.Queue[object] = field(default_factory=queue.Queue)
    _stderr: TextIO | None = None
    _pump_thread: threading.Thread | None = None

    @property
    def argv(self) -> list[str]:
        return claude_argv(
            self.claude,
            [
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                "--session-id",
                self.session_id,
                *self.extra_args,
            ],
        )

    def __enter__(self) -> StreamSession:
        self._stderr = self.stderr_path.open("w", encoding="utf-8")
        self._process = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=dict(self.env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._pump_thread = threading.Thread(target=self._pump, name="claude-stdout", daemon=True)
        self._pump_thread.start()
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
        self._lines.put(_EOF)

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def describe(self) -> str:
        return (
            f"argv: {self.argv}\nexit: {self.returncode}\n"
            f"--- stdout (last lines) ---\n{''.join(self.raw_lines[-40:])[-8000:]}\n"
            f"--- stderr ---\n{self.stderr_text()[-4000:]}"
        )

    def send(self, prompt: str, timeout: float = TURN_TIMEOUT_S) -> Turn:
        """Write one user message and read events until that turn's ``result``."""
        process = self._process
        assert process is not None and process.stdin is not None, "not started"
        mark = self.request_mark() if self.request_mark is not None else -1
        line = {"type": "user", "message": {"role": "user", "content": prompt}}
        started = time.monotonic()
        try:
            process.stdin.write(json.dumps(line) + "\n")
            process.stdin.flush()
        except OSError as error:
            raise ClaudeCodeError(
                f"cannot write turn {prompt!r}: {error}\n{self.describe()}"
            ) from error
        events: list[dict[str, Any]] = []
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                item = self._lines.get(timeout=max(remaining, 0.0))
            except queue.Empty:
                raise ClaudeCodeError(
                    f"turn {prompt!r}: no result within {timeout}s\n{self.describe()}"
                ) from None
            if item is _EOF:
                self._lines.put(_EOF)
                self.returncode = process.wait(timeout=10)
                raise ClaudeCodeError(
                    f"turn {prompt!r}: Claude Code exited before the result\n{self.describe()}"
                )
            assert isinstance(item, str)
            self.raw_lines.append(item)
            parsed = parse_events(item)
            events += parsed
            self.all_events += parsed
            if any(event.get("type") == "result" for event in parsed):
                break
        turn = Turn(prompt, events, mark, time.monotonic() - started)
        self.turns.append(turn)
        return turn

    def close(self) -> None:
        """Close stdin (Claude Code ends the session, SessionEnd runs), then kill the group."""
        process = self._process
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=EXIT_GRACE_S)
        npm_client.kill_group(process)
        self.returncode = process.returncode
        # Whatever it printed while exiting (SessionEnd's hook events).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                item = self._lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is _EOF:
                break
            assert isinstance(item, str)
            self.raw_lines.append(item)
            self.all_events += parse_events(item)
        if self._pump_thread is not None:
            self._pump_thread.join(timeout=5)
        if not (self._pump_thread and self._pump_thread.is_alive()) and process.stdout:
            process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
        if self.stdout_path is not None:
            self.stdout_path.write_text("".join(self.raw_lines), encoding="utf-8")
        self._process = None


# ------------------------------------------------------------------------ leak checks


def processes_mentioning(marker: str) -> list[tuple[int, str]]:
    """Live processes (other than us) whose command line or environment holds ``marker``.

    Everything Claude Code and its hooks start inherits the test's HOME, so the test's
    temporary path finds them all, the detached ``agentmonitors daemon run`` included.
    """
    found: list[tuple[int, str]] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    needle = marker.encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text(errors="replace")
        except OSError:
            continue  # gone, or not ours to read
        if "\nState:\tZ" in status:
            continue  # a zombie holds nothing; its parent reaps it
        if needle in cmdline or needle in environ:
            found.append((int(entry.name), cmdline.replace(b"\0", b" ").decode(errors="replace")))
    return found


def wait_for_no_processes(marker: str, timeout: float = 15.0) -> list[tuple[int, str]]:
    """Poll until nothing mentions ``marker``; what is still alive at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        alive = processes_mentioning(marker)
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.2)


def kill_pids(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)

"""The throwaway daemon ``verify`` runs by default: its own socket, database and log.

A real child process over the real workspace, so the monitor is observed exactly as a
session's daemon would observe it, but nothing it stores reaches a real session: the
temporary folder holding its socket, database and output is removed at teardown.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Protocol

from agentmonitors.paths import neutral_cwd, python_command, workspace_log_path
from agentmonitors.workspace import workspace_data_dir

STOP_GRACE_S = 3.0
# A short tick keeps every stage's wait close to the monitor's own interval.
POLL_MS = 250
MAX_OUTPUT_CHARS = 4000
VERIFY_HOOK_STATE = "verify-hook-state.json"
VERIFY_LOG = "verify-daemon.log"
"""Where a throwaway daemon's whole output is kept when verify shows only its end."""


def output_tail(text: str, whole: str) -> str:
    """The last :data:`MAX_OUTPUT_CHARS` of ``text``, saying how much came before and
    where ``whole`` (a file) holds all of it."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    left_out = len(text) - MAX_OUTPUT_CHARS
    return (
        f"… ({left_out} earlier characters left out; the whole output is in {whole})\n"
        + text[-MAX_OUTPUT_CHARS:]
    )


def answers(
    ping: Callable[[str], bool], socket_path: str, deadline: float, *, gone: Callable[[], bool]
) -> bool:
    """True once ``socket_path`` answers ``ping``; False when the daemon is ``gone`` or
    the ``time.monotonic()`` deadline passes."""
    while time.monotonic() < deadline:
        if gone():
            return False
        if ping(socket_path):
            return True
        time.sleep(0.05)
    return False


def read_log(path: str) -> str:
    """A daemon's log as text ("" when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


class VerifyDaemon(Protocol):
    """What a verify run needs of its daemon, throwaway or the workspace's."""

    keeps_running: bool
    socket_path: str
    hook_state_path: str

    def start(self) -> None: ...
    def exited(self) -> int | None: ...
    def wait_ready(self, ping: Callable[[str], bool], deadline: float) -> bool: ...
    def running_pid(self) -> int | None: ...
    def output(self) -> str: ...
    def stop(self) -> None: ...
    def remove(self) -> None: ...


class IsolatedDaemon:
    """A ``daemon run`` child over ``workspace`` with a temporary socket and database."""

    keeps_running = False

    def __init__(
        self, workspace: str, monitors_dir: str | None, monitor_id: str | None = None
    ) -> None:
        self.workspace = workspace
        self.monitors_dir = monitors_dir
        # The monitor being proved: the project's others are not run (their commands,
        # requests and side effects are no part of this proof).
        self.monitor_id = monitor_id
        self.folder = tempfile.mkdtemp(prefix="amv-")
        self.socket_path = os.path.join(self.folder, "d.sock")
        self.db_path = os.path.join(self.folder, "verify.db")
        self.log_path = os.path.join(self.folder, "daemon.log")
        self.hook_state_path = os.path.join(self.folder, "hook-state.json")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = python_command("-m", "agentmonitors", "daemon", "run")
        if self.monitors_dir is not None:
            args.append(os.path.abspath(self.monitors_dir))
        args += [
            "--workspace",
            self.workspace,
            "--socket",
            self.socket_path,
            "--poll-ms",
            str(POLL_MS),
            "--reap-after-ms",
            "0",
            "--log",
            self.log_path,
        ]
        if self.monitor_id is not None:
            args += ["--only-monitor", self.monitor_id]
        env = {**os.environ, "AGENTMONITORS_DB": self.db_path}
        with open(self.log_path, "wb") as log:
            # Its own session: a Ctrl-C at the terminal reaches verify, which then
            # tears the daemon down in order instead of both dying at once. Its own
            # folder, never the project's, and -P: nothing in the project may stand in
            # for a module the daemon loads (docs/architecture.md).
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                env=env,
                start_new_session=True,
            )

    def running_pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def exited(self) -> int | None:
        """The exit code once the child has exited, else None."""
        return None if self.process is None else self.process.poll()

    def wait_ready(self, ping: Callable[[str], bool], deadline: float) -> bool:
        """True once the socket answers; False when the child exits or time runs out."""
        return answers(ping, self.socket_path, deadline, gone=lambda: self.exited() is not None)

    def output(self) -> str:
        text = read_log(self.log_path)
        if len(text) <= MAX_OUTPUT_CHARS:
            return text
        # The folder goes at teardown: the whole output is kept where the user can read it.
        kept = os.path.join(workspace_data_dir(self.workspace), VERIFY_LOG)
        try:
            os.makedirs(os.path.dirname(kept), mode=0o700, exist_ok=True)
            shutil.copyfile(self.log_path, kept)
        except OSError:
            kept = "no file (it could not be kept)"
        return output_tail(text, kept)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period; never raises."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_GRACE_S)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class WorkspaceDaemon:
    """The workspace's own daemon (``--use-workspace-daemon``): used, booted if down, kept.

    Nothing is torn down: the caller retracts what the run produced instead.
    """

    keeps_running = True

    def __init__(self, workspace: str, monitors_dir: str | None, socket_path: str) -> None:
        self.workspace = workspace
        self.monitors_dir = monitors_dir
        self.socket_path = socket_path
        # The daemon keeps rewriting a closed session's hook state (at each refresh), so
        # a temporary folder would come back after removal. Every verify session of the
        # workspace shares this one file in its data folder: bounded, and outside the
        # project.
        self.hook_state_path = os.path.join(workspace_data_dir(workspace), VERIFY_HOOK_STATE)
        self.pid: int | None = None
        self._boot_output = ""
        self._boot_code: int | None = None

    def start(self) -> None:
        """``daemon start`` (which returns at once when one already answers)."""
        args = python_command("-m", "agentmonitors", "daemon", "start")
        if self.monitors_dir is not None:
            args.append(os.path.abspath(self.monitors_dir))
        args += ["--workspace", self.workspace, "--socket", os.path.abspath(self.socket_path)]
        done = subprocess.run(
            args,
            cwd=neutral_cwd(self.workspace),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        self._boot_output = done.stdout + done.stderr
        if done.returncode != 0 and "already running" not in self._boot_output:
            self._boot_code = done.returncode

    def attach(self, status: Callable[[], object]) -> None:
        """Remember the daemon's pid, so a daemon that dies mid-run is noticed."""
        reply = status()
        if isinstance(reply, dict) and isinstance(reply.get("pid"), int):
            self.pid = reply["pid"]

    def running_pid(self) -> int | None:
        return self.pid

    def exited(self) -> int | None:
        if self._boot_code is not None:
            return self._boot_code
        if self.pid is None:
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return -1
        except PermissionError:
            return None
        return None

    def wait_ready(self, ping: Callable[[str], bool], deadline: float) -> bool:
        return answers(ping, self.socket_path, deadline, gone=lambda: self._boot_code is not None)

    def output(self) -> str:
        path = workspace_log_path(self.workspace)
        return output_tail(self._boot_output + read_log(path), path)

    def stop(self) -> None:
        return None

    def remove(self) -> None:
        return None

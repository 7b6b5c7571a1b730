"""Boot a workspace's daemon from ``session start`` and wait until it answers.

Only the first session of a workspace gets here (``transports/session_open.py``
imports it when no daemon answers), so the spawn machinery stays off every other
session start.
"""

from __future__ import annotations

import os
import time

from agentmonitors.daemon.client import ping
from agentmonitors.daemon.spawn import spawn_daemon
from agentmonitors.paths import neutral_cwd, workspace_log_path
from agentmonitors.workspace import write_local_state

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.workspace import LocalState

BOOT_WAIT_S = 8.0
BOOT_PING_S = 0.15
BOOT_POLL_MS = 1000


def boot_or_record_failure(
    workspace: str, socket: str, db: str, state: LocalState, boot_session: str
) -> str | None:
    """Boot the daemon; on failure, stamp the enable file (the hook's boot-failed
    warning reads it) and return what went wrong."""
    failure = _boot(workspace, socket, db, state.reap_after_ms, boot_session)
    if failure is not None:
        # UTC to the millisecond, as `datetime.now(UTC)` would print it, without its import.
        now = time.time()
        stamp = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
        )
        write_local_state(workspace, state._replace(last_boot_failure_at=stamp))
    return failure


def _boot(
    workspace: str, socket: str, db: str, reap_after_ms: int, boot_session: str | None = None
) -> str | None:
    """Start a detached daemon for ``workspace`` and wait until it answers.

    ``boot_session`` (``adapter:host session id``) is registered by the daemon before
    its first tick.

    Returns None once it answers, else what went wrong: a daemon that exited says why
    in its log (a database that cannot be opened, say), and that line is the answer.
    """
    argv = [
        os.path.join(workspace, ".claude", "monitors"),
        "--workspace",
        workspace,
        "--socket",
        socket,
        "--poll-ms",
        str(BOOT_POLL_MS),
        "--reap-after-ms",
        str(reap_after_ms),
    ]
    if boot_session is not None:
        argv += ["--boot-session", boot_session]
    env = {**os.environ, "AGENTMONITORS_DB": db, "AGENTMONITORS_SOCKET": socket}
    log_path = workspace_log_path(workspace)
    log_start = _size(log_path)
    # Never the project folder: nothing there may stand in for a module the daemon loads.
    pid = spawn_daemon(argv, env, log_path, neutral_cwd(workspace))
    deadline = time.monotonic() + BOOT_WAIT_S
    while time.monotonic() < deadline:
        if ping(socket, timeout_s=0.5):
            return None
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            finished = 0
        if finished:
            # It exited: maybe another session's daemon won the race; it may answer now.
            if ping(socket, timeout_s=0.5):
                return None
            reason = _logged_error(log_path, log_start)
            if reason is not None:
                return f"Daemon failed to start: {reason} (log: {log_path})"
            return f"Daemon exited at start; see its log: {log_path}"
        time.sleep(BOOT_PING_S)
    return f"Daemon failed to start within {int(BOOT_WAIT_S)}s"


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _logged_error(log_path: str, start: int) -> str | None:
    """The last ``error: ...`` the daemon wrote to its log since ``start``."""
    try:
        with open(log_path, "rb") as handle:
            # A log rotated at the spawn starts afresh.
            handle.seek(start if os.fstat(handle.fileno()).st_size >= start else 0)
            tail = handle.read(65536).decode("utf-8", "replace")
    except OSError:
        return None
    found = None
    for line in tail.splitlines():
        marker = line.find("error: ")
        if marker >= 0:
            found = line[marker + len("error: ") :].strip()
    return found or None

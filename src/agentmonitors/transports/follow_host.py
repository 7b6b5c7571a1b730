"""The plugin's follower: ``events follow --host-session <id>``, for one whole session.

Claude Code runs the plugin's ``monitors`` entry about 0.7 s after launch, in the
session's folder, with ``CLAUDE_CODE_SESSION_ID`` set, often before SessionStart has
registered the session, never restarts it, and turns every stdout line into a model
turn (docs/architecture.md, "Live updates"). So this waits, printing nothing, until the
project is enabled, live updates are on and the daemon knows the session; then it
follows it with :class:`~agentmonitors.transports.follow.Follower`. A daemon that went
away is booted again as session start boots it; a session that went dormant is waited
for again, unless its process went on to another session (``/clear`` starts one with a
new id and leaves this follower running): then that one is followed. It ends when
Claude Code ends it, or when Claude Code is gone; a stop it cannot avoid (a daemon that
cannot be started) ends with one line saying so.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, TextIO

from agentmonitors.daemon.client import DaemonError, call
from agentmonitors.delivery.host_process import current_session
from agentmonitors.paths import fit_socket_path, workspace_db, workspace_socket
from agentmonitors.transports.follow import Follower
from agentmonitors.workspace import (
    LocalState,
    live_setting,
    resolve_enabled_project,
)

HOST_SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
ADAPTER = "claude-code"
WAIT_S = 0.25
"""Between looks while the session is not known yet (it registers within a second)."""
WAIT_LONG_S = 2.0
"""Between looks once it has been unknown for :data:`QUICK_LOOKS_S` (a session gone
dormant, a hook that never ran): still in time for its next prompt, without waking
four times a second for hours."""
QUICK_LOOKS_S = 10.0
BOOT_GRACE_S = 10.0
"""How long a daemon that never answered is left to session start, which boots it."""
REVIVE_AFTER_S = 1.0
"""How long a daemon that answered before may be away before it is booted again."""
BOOT_ATTEMPTS = 3
"""Failed boots in a row after which live updates stop (the hooks still deliver)."""


def _alive(pid: str | None) -> bool:
    """Whether Claude Code (``$CLAUDE_PID``) still runs; True when unknown."""
    if not pid or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class HostFollower:
    """Find the session Claude Code calls ``host_session_id``, then follow it."""

    def __init__(
        self,
        host_session_id: str,
        socket_override: str | None,
        fmt: str = "text",
        out: TextIO | None = None,
    ) -> None:
        self.host_session_id = host_session_id
        self.out = out
        self.socket_override = socket_override
        self.fmt = fmt
        self.stop = threading.Event()
        self.claude_pid = os.environ.get("CLAUDE_PID")
        self.follower: Follower | None = None
        self._known_daemon = False
        self._away_since: float | None = None
        self._last_away = 0.0
        self._failed_boots = 0
        self._first_look = time.monotonic()
        self._ended = False  # the session it followed ended (it may go on after /clear)
        self._unknown_since: float | None = None

    def project(self) -> tuple[str, LocalState, str] | None:
        """The enabled project of this folder with live updates on, and its socket."""
        workspace, state = resolve_enabled_project(None)
        if not state.enabled or live_setting(state.live) is False:
            return None
        socket = self.socket_override or fit_socket_path(workspace_socket(workspace, state))
        return workspace, state, socket

    def find_session(self, socket: str) -> dict[str, Any] | None:
        listed = call(socket, "session.list", {})
        for record in listed if isinstance(listed, list) else []:
            if (
                isinstance(record, dict)
                and record.get("hostSessionId") == self.host_session_id
                and record.get("status") == "active"
            ):
                return record
        return None

    def boot(self, workspace: str, state: LocalState, socket: str) -> str | None:
        """Boot the workspace's daemon as session start does; why not, when it failed."""
        # Lazy: only a follower whose daemon went away spawns one.
        from agentmonitors.transports.daemon_boot import boot_or_record_failure

        db = workspace_db(workspace, state)
        return boot_or_record_failure(
            workspace, socket, db, state, f"{ADAPTER}:{self.host_session_id}"
        )

    def away(self, workspace: str, state: LocalState, socket: str) -> str | None:
        """The daemon does not answer: boot it when it is ours to; a reason to stop."""
        now = time.monotonic()
        if self._away_since is None or now - self._last_away > 5 * WAIT_S + 1.0:
            self._away_since = now  # a new outage, not the one last seen
        self._last_away = now
        waited = now - (self._away_since if self._known_daemon else self._first_look)
        if waited < (REVIVE_AFTER_S if self._known_daemon else BOOT_GRACE_S):
            return None
        failure = self.boot(workspace, state, socket)
        if failure is None:
            self._failed_boots = 0
            self._away_since = None
            return None
        self._failed_boots += 1
        if self._failed_boots >= BOOT_ATTEMPTS:
            return f"the daemon stopped and could not be started again ({failure})"
        return None

    def went_on(self, socket: str) -> bool:
        """After its session ended: whether Claude Code went on to another one in the
        same process (``/clear``), now followed instead (its SessionStart recorded it)."""
        if not self._ended:
            return False
        successor = current_session(self.claude_pid)
        if successor is None or successor == self.host_session_id:
            return False
        previous, self.host_session_id = self.host_session_id, successor
        try:
            registered = self.find_session(socket) is not None
        except DaemonError:
            registered = False  # the next look finds the daemon away, and revives it
        if not registered:
            self.host_session_id = previous  # not registered yet: look again soon
            return False
        self._ended = False
        return True

    def gone(self) -> bool:
        return self.stop.is_set() or not _alive(self.claude_pid)

    def run(self) -> int:
        while not self.gone():
            found = self.project()
            if found is None:
                self.stop.wait(1.0)
                continue
            workspace, state, socket = found
            try:
                session = self.find_session(socket)
            except DaemonError:
                failure = self.away(workspace, state, socket)
                if failure is not None:
                    Follower(
                        "", socket, out=self.out, host_session_id=self.host_session_id
                    ).stopping_line(failure)
                    return 0
                self.stop.wait(WAIT_S)
                continue
            self._known_daemon = True
            self._away_since = None
            if session is None:
                if not self.went_on(socket):
                    self._unknown_since = self._unknown_since or time.monotonic()
                    quick = time.monotonic() - self._unknown_since < QUICK_LOOKS_S
                    self.stop.wait(WAIT_S if quick else WAIT_LONG_S)
                continue
            self._unknown_since = None
            code = self.follow(str(session["id"]), workspace, state, socket)
            if code is not None:
                return code
        return 0

    def follow(self, session_id: str, workspace: str, state: LocalState, socket: str) -> int | None:
        """Follow one active session; None to go back to waiting (it went dormant)."""

        def revive() -> str | None:
            return self.away(workspace, state, socket)

        follower = Follower(
            session_id,
            socket,
            fmt=self.fmt,
            out=self.out,
            host_session_id=self.host_session_id,
            revive=revive,
        )
        self.follower = follower
        if self.stop.is_set():
            return 0
        code = follower.run()
        self.follower = None
        if follower.reason == "the session ended" and not self.gone():
            self._ended = True
            return None
        return code


def run_host_follow(host_session_id: str, socket_override: str | None, fmt: str = "text") -> int:
    """The command: follow the session Claude Code knows as ``host_session_id``."""
    runner = HostFollower(host_session_id, socket_override, fmt)

    def stop(_signum: int, _frame: object) -> None:
        runner.stop.set()
        if runner.follower is not None:
            runner.follower.interrupt()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return runner.run()

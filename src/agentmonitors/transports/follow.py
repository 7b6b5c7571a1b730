"""``events follow``: live delivery lines for a Claude Code monitor.

Two callers run it: the agent, with Claude Code's Monitor tool and ``--session <id>``;
and the plugin's own ``monitors`` entry, with the host's session id
(``transports/follow_host.py``), which lives for the whole session. Both go through
:class:`Follower`; one follower per session whoever starts it (a lock that dies with its
process): a second one says so in one line and stops.

The Monitor tool turns each stdout line of a command into a model turn while the
session is idle, so this prints exactly one line per delivery and nothing else on
stdout (diagnostics go to stderr). Each line goes through the shared handoff: the
daemon reserves and renders it (``delivery.reserveRendered``), it is written, then
committed; a line that could not be written is released, so the hooks deliver it.

A line is committed when written, not on proof as a channel push is. The Monitor turn's
UserPromptSubmit does carry the line as its prompt, but while a tool runs Claude Code
holds the line until the tool ends and runs that tool's PostToolUse hook first: waiting
for the proof would let the lease lapse under a long tool call, and PostToolUse would
then show the event again in the very request that carries the line. A written line is
not dropped unseen the way a push can be: Claude Code shows every line it reads from the
Monitor's stdout while the session lives, and a reader that went away is seen here as a
failed write.

Lines are paced within the host's rate limit (``transports/follow_pace.py``): while no
room is left nothing is reserved, so what settles meanwhile waits in the daemon and the
next line carries it; the deliveries one poll finds (each lifecycle, and whatever the
cap left over) are written as one line.

It stops, releasing whatever it had not written:

- before ``--max-seconds`` (below the Monitor tool's 30-minute cap), printing one last
  line that asks the agent to start it again (``--session`` only);
- when the session ends or the project is disabled (the plugin's follower pauses on a
  disabled project or ``live: off`` instead, quietly);
- on SIGTERM/SIGINT, and when the reader of stdout goes away;
- the plugin's follower: when the daemon cannot be started again, with one last line
  saying why and that the hooks still deliver.

A daemon that is down or restarting is waited for, not fatal. While it runs it keeps
a ``follow`` transport heartbeat, which also keeps the daemon from idling out.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, cast

from agentmonitors.daemon.client import DaemonApplicationError, DaemonConnectionError, call
from agentmonitors.daemon.process_lock import take_process_lock
from agentmonitors.delivery.heartbeats import (
    FOLLOW_TTL_MS,
    record_file_name,
    remove_heartbeat,
    write_heartbeat,
)
from agentmonitors.delivery.text import _socket_clause
from agentmonitors.paths import workspace_db
from agentmonitors.transports.follow_pace import Pace
from agentmonitors.transports.follow_wait import PushWait, poll_until_written
from agentmonitors.transports.handoff import COMMITTED, LAPSED, UNWRITTEN, hand_off, pending_text
from agentmonitors.workspace import data_root, enable_file_path, live_setting, read_local_state

if TYPE_CHECKING:
    from agentmonitors.delivery.wire import RenderedReply

DEFAULT_MAX_SECONDS = 25 * 60
"""Below Claude Code's 30-minute Monitor limit, with room for the restart line."""
POLL_S = 0.1
"""Between polls, with a daemon that cannot push (one without ``delivery.wait``)."""
WATCH_S = 0.01
"""With such a daemon, between looks at the database's files: a write starts a poll."""
RECONNECT_S = 0.5
"""Between attempts while the daemon is unreachable."""
ENABLED_CHECK_S = 1.0
DISABLE_CONFIRM_S = 0.2
HEARTBEAT_EVERY_S = 10.0
HEARTBEAT_SLACK_S = 0.5
FORMATS = ("text", "json")
MAX_PARTS = 4
"""Deliveries one line may merge (each is at most the follow cap, 600 code points)."""

Ipc = Callable[[str, dict[str, Any]], Any]
Revive = Callable[[], "str | None"]


def already_followed_line(session_id: str) -> str:
    """What a second follower of one session says before it stops."""
    return (
        f"AgentMon: live updates for session {session_id} already come from another "
        "follower (the agentmonitors plugin's monitor, or an earlier Monitor); this one "
        "stops here. Nothing is lost: that follower and the hooks deliver."
    )


def session_lock_path(session_id: str) -> str:
    """``<data root>/agentmonitors/follow/<session>.lock``: one follower per session."""
    folder = os.path.join(data_root(), "agentmonitors", "follow")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, record_file_name("follow", session_id)[: -len(".json")] + ".lock")


def restart_line(session_id: str, socket_path: str) -> str:
    """The last line before ``--max-seconds``: how to keep live updates coming."""
    return (
        "AgentMon: live updates paused (time limit). Start the Monitor again with: "
        f"agentmonitors events follow --session {session_id}{_socket_clause(socket_path)}"
    )


class Follower:
    """One ``events follow`` run: poll, hand off, heartbeat, stop."""

    def __init__(
        self,
        session_id: str,
        socket_path: str,
        *,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        fmt: str = "text",
        out: TextIO | None = None,
        err: TextIO | None = None,
        ipc: Ipc | None = None,
        clock: Callable[[], float] = time.monotonic,
        host_session_id: str | None = None,
        revive: Revive | None = None,
        pace: Pace | None = None,
    ) -> None:
        self.session_id = session_id
        # Set for the plugin's follower: it lives for the session (no time limit, a
        # disabled project or ``live: off`` pauses it) and ``revive`` boots a daemon
        # that went away; its last line, if it must stop, says why.
        self.host_session_id = host_session_id
        self.revive = revive
        self.pace = pace or Pace(clock=clock)
        self.paused = False
        self.db_path: str | None = None
        """The workspace's database, watched between polls (None: poll only)."""
        self.reason: str | None = None
        """Why the last run stopped."""
        self.socket_path = socket_path
        self.max_seconds = max_seconds
        self.fmt = fmt
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._ipc = ipc
        self.clock = clock
        self.stop = threading.Event()
        self.workspace: str | None = None
        self._key = f"{session_id}-{os.getpid()}"
        self._unreachable = False
        self._last_heartbeat = -HEARTBEAT_EVERY_S
        self._last_enabled_check = -ENABLED_CHECK_S
        # The last hold ended quiet and kept: no reserve (docs/architecture.md, "Idle cost").
        self._quiet_hold = False
        self.push = PushWait(socket_path, session_id)
        self.push.pushes = ipc is None  # an injected daemon is polled
        self._started = clock()

    def interrupt(self) -> None:
        """Stop now, even from inside a wait (a signal handler may call it)."""
        self.stop.set()
        self.push.interrupt()

    # ------------------------------------------------------------------ plumbing

    def ipc(self, method: str, params: dict[str, Any]) -> Any:
        if self._ipc is not None:
            return self._ipc(method, params)

        return call(self.socket_path, method, params)

    def note(self, text: str) -> None:
        try:
            print(f"agentmonitors events follow: {text}", file=self.err, flush=True)
        except (OSError, ValueError):
            return

    def emit(
        self, line: str, replies: list[dict[str, Any]] | None = None, kind: str = "delivery"
    ) -> bool:
        """Print one line; False when stdout is gone (the caller then stops)."""
        if self.fmt == "json":
            record: dict[str, Any] = {"type": kind, "sessionId": self.session_id, "line": line}
            claims = [
                claim
                for reply in replies or []
                if (claim := (reply.get("reservation") or {}).get("claim")) is not None
            ]
            if claims:
                events = [event for claim in claims for event in claim.get("events", [])]
                record["lifecycle"] = claims[0].get("lifecycle")
                record["eventIds"] = [event["eventId"] for event in events]
                record["events"] = [
                    {key: event.get(key) for key in ("eventId", "monitorId", "urgency", "title")}
                    for event in events
                ]
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        try:
            self.out.write(line + "\n")
            self.out.flush()
        except (OSError, ValueError):
            self.stop.set()
            _silence_stdout()
            return False
        return True

    def reader_gone(self) -> bool:
        """True when stdout is a pipe whose reader closed it (nothing can arrive)."""
        try:
            fd = self.out.fileno()
        except (OSError, ValueError, AttributeError):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # errors and hang-ups are always reported
        try:
            return any(mask & (select.POLLERR | select.POLLHUP) for _fd, mask in poller.poll(0))
        except OSError:
            return False

    def heartbeat(self, now: float, *, delivered: bool = False) -> None:
        # A little early rather than one more wake for it (a wait's hold ends on time).
        if not delivered and now - self._last_heartbeat < HEARTBEAT_EVERY_S - HEARTBEAT_SLACK_S:
            return
        if self.stop.is_set() or self.workspace is None:
            return  # a late write must not recreate the record removed on exit

        write_heartbeat(
            "follow",
            self._key,
            workspace=self.workspace,
            socket_path=self.socket_path,
            host_session_id=self.host_session_id,
            session_id=self.session_id,
            ttl_ms=FOLLOW_TTL_MS,
            delivered=delivered,
        )
        self._last_heartbeat = now

    def disabled(self, now: float) -> bool:
        """Whether this follower must not follow now: the project is disabled, or (the
        plugin's follower) the enable file says ``live: off``. Read once a second."""
        if self.workspace is None or now - self._last_enabled_check < ENABLED_CHECK_S:
            return self.paused
        self._last_enabled_check = now
        state = read_local_state(self.workspace)
        if not state.enabled and not self.paused:
            # An editor that writes the file in place shows it empty for a moment: a
            # disable is believed when a second look a little later agrees.
            self.stop.wait(DISABLE_CONFIRM_S)
            state = read_local_state(self.workspace)
        live = self.host_session_id is None or live_setting(state.live) is not False
        self.paused = not (state.enabled and live)
        return self.paused

    # ------------------------------------------------------------------ the loop

    def idle(self, seconds: float) -> None:
        """Wait until the daemon says the session may have news (``delivery.wait``): a
        change, a settle window ending, a lapsed lease, the session ending. Meanwhile
        nothing wakes this process but its heartbeat and the host's rate limit."""
        # The hold ends with the heartbeat due; the poll after it also keeps the
        # session active, as a follower always has.
        now = self.clock()
        hold = self._last_heartbeat + HEARTBEAT_EVERY_S - now
        if hold <= 0:  # no heartbeat written yet: nothing to keep fresh
            hold = HEARTBEAT_EVERY_S
        if not self.pace.ready():
            hold = min(hold, self.pace.wait_s())
        if self.host_session_id is None:  # the time limit's line goes out on time
            hold = min(hold, max(0.0, self._started + self.max_seconds - now))
        if self.workspace is not None:
            self.push.watch_file(enable_file_path(self.workspace))
        if not self.push.watching:  # the enable file is looked at once a second
            hold = min(hold, ENABLED_CHECK_S)
        paced = not self.pace.ready()  # what it held back is pending, though nothing moved
        if not self.push.wait(max(0.01, hold), self._out_fd()):
            self._poll_idle(seconds)
        elif self.push.file_changed:
            self._last_enabled_check = -ENABLED_CHECK_S  # read it now
        else:
            self._quiet_hold = self.push.quiet and not paced

    def _out_fd(self) -> int | None:
        try:
            return self.out.fileno()
        except (OSError, ValueError, AttributeError):
            return None

    def _poll_idle(self, seconds: float) -> None:
        """Without a push: until the next poll, or until the daemon writes to its
        database (the line then goes out at once instead of up to a poll later)."""
        poll_until_written(self.db_path, seconds, self.stop, self.clock, WATCH_S)

    def reserve(self) -> dict[str, Any]:
        return cast(
            "dict[str, Any]",
            self.ipc(
                "delivery.reserveRendered",
                {
                    "transport": "follow",
                    "sessionId": self.session_id,
                    "socketPath": self.socket_path,
                },
            ),
        )

    def poll_once(self) -> str | None:
        """One reserve → write → commit round; a reason to stop, else None.

        Nothing is reserved while the pace has no room. Otherwise every delivery
        pending now (up to :data:`MAX_PARTS`) is reserved and written as one line.
        """
        if not self.pace.ready():
            return None
        replies: list[dict[str, Any]] = []
        try:
            while len(replies) < MAX_PARTS:
                reply = self.reserve()
                if not isinstance(reply, dict) or not isinstance(reply.get("session"), dict):
                    return "error: the daemon does not support events follow; restart it"
                session = reply["session"]
                self.workspace = session.get("workspacePath") or self.workspace
                if self.db_path is None and self.workspace is not None:
                    self.db_path = workspace_db(self.workspace, read_local_state(self.workspace))
                if session.get("status") != "active":
                    return "the session ended"  # the daemon reserves nothing for it
                if not pending_text(cast("RenderedReply", reply)):
                    hand_off(self.ipc, cast("RenderedReply", reply), lambda _text: False)
                    break
                replies.append(reply)
        except DaemonApplicationError as error:
            self._give_back(replies)
            return f"error: {error.message}"
        except DaemonConnectionError as error:
            self._give_back(replies)
            if not self._unreachable:
                self.note(f"daemon unreachable ({error.message}); retrying")
            self._unreachable = True
            return None
        if self._unreachable:
            self.note("daemon reachable again")
            self._unreachable = False
        if not replies:
            return None
        return self._write_merged(replies)

    def _give_back(self, replies: list[dict[str, Any]]) -> None:
        for reply in replies:
            with contextlib.suppress(Exception):  # a lease lapses by itself
                hand_off(self.ipc, cast("RenderedReply", reply), lambda _text: False)

    def _write_merged(self, replies: list[dict[str, Any]]) -> str | None:
        """Write the replies' texts as one line, then commit (or release) each."""
        line = " ".join(pending_text(cast("RenderedReply", reply)) for reply in replies)
        written: list[bool] = []

        def write(_text: str) -> bool:
            if not written:
                # A stop that arrived after the reservation leaves the line to the hooks.
                written.append(not self.stop.is_set() and self.emit(line, replies))
                if written[0]:
                    self.pace.spend()
            return written[0]

        outcomes: list[str] = []
        for reply in replies:
            try:
                outcomes.append(hand_off(self.ipc, cast("RenderedReply", reply), write))
            except DaemonConnectionError as error:
                self.note(f"commit failed ({error.message}); the line may be delivered again")
                return None
        if any(outcome in (COMMITTED, LAPSED) for outcome in outcomes):
            self.heartbeat(self.clock(), delivered=True)
        elif UNWRITTEN in outcomes and self.stop.is_set():
            return "stdout closed or stopped"
        return None

    def stopping_line(self, why: str) -> None:
        """The plugin follower's last line: why live updates stop, and that hooks deliver."""
        time.sleep(self.pace.wait_s())  # within the host's limit, or it is dropped
        self.emit(
            f"AgentMon: live updates stopped for this session: {why}. Monitor events still "
            "reach you through the hooks, at the next prompt or tool call; "
            "`agentmonitors doctor` says more.",
            kind="stopped",
        )

    def run(self) -> int:
        """Follow until a stop; 0 on every clean stop, 1 on an error."""
        try:
            lock = take_process_lock(session_lock_path(self.session_id))
        except OSError as error:  # no lock folder: follow anyway, as before the lock
            self.note(f"cannot take the session's follower lock ({error}); following anyway")
            return self._run()
        if lock is None:
            self.emit(already_followed_line(self.session_id), kind="duplicate")
            self.note("another follower holds this session")
            return 0
        try:
            return self._run()
        finally:
            lock.release()

    def _run(self) -> int:
        self.push.open()
        if self.stop.is_set():
            self.push.interrupt()
        try:
            return self._follow()
        finally:
            self.push.close()

    def _follow(self) -> int:
        started = self._started = self.clock()
        reason: str | None = None
        try:
            while not self.stop.is_set():
                now = self.clock()
                if self.host_session_id is None and now - started >= self.max_seconds:
                    self.emit(restart_line(self.session_id, self.socket_path), kind="restart")
                    reason = "time limit reached"
                    break
                if self.reader_gone():
                    reason = "stdout closed"
                    break
                if self.disabled(now):
                    if self.host_session_id is None:
                        reason = "monitoring was disabled in this project"
                        break
                    # The plugin's follower waits quietly, and keeps no record meanwhile.
                    remove_heartbeat("follow", self._key)
                    self._last_heartbeat = -HEARTBEAT_EVERY_S
                    self.stop.wait(ENABLED_CHECK_S)
                    continue
                reason = None if self._quiet_hold else self.poll_once()
                self._quiet_hold = False
                if reason is not None:
                    break
                if self._unreachable and self.revive is not None:
                    failure = self.revive()
                    if failure is not None:
                        self.stopping_line(failure)
                        reason = f"stopped: {failure}"
                        break
                self.heartbeat(self.clock())
                if self._unreachable:
                    self.stop.wait(RECONNECT_S)
                else:
                    self.idle(POLL_S)
        finally:
            self.stop.set()
            remove_heartbeat("follow", self._key)
        if reason is None:
            reason = "stopped"
        self.reason = reason
        if reason.startswith("error: "):
            if self.host_session_id is not None:
                self.stopping_line(reason[len("error: ") :])
            # The one failure line every command ends with (docs/cli.md).
            with contextlib.suppress(OSError, ValueError):
                print(f"{reason} (agentmonitors events follow)", file=self.err, flush=True)
            return 1
        self.note(reason)
        return 0


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail loudly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        return


def run_follow(
    session_id: str,
    socket_path: str,
    *,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    fmt: str = "text",
) -> int:
    """The command: follow with SIGTERM/SIGINT turned into a clean stop."""
    follower = Follower(session_id, socket_path, max_seconds=max_seconds, fmt=fmt)

    def stop(_signum: int, _frame: object) -> None:
        follower.interrupt()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return follower.run()

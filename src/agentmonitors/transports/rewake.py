"""``hook rewake``: wake an idle headless Claude Code session with its next delivery.

Claude Code arms a plugin's ``monitors`` only in interactive sessions, so a headless one
(``claude -p --input-format stream-json``, the SDK) has no live line. This is a Stop
hook declared with ``asyncRewake``: Claude Code runs it in the background, and when it
exits 2 its stderr becomes the session's next turn. So it waits for the session's next
deliverable event and exits 2 with it; see docs/architecture.md, "Host adapters".

- It stays out of the way (exit 0 at once) when a follower already delivers live to this
  session: the plugin's monitor or an agent-started Monitor listed in the Stop input's
  ``background_tasks``, or a fresh ``follow`` heartbeat while it waits.
- A plain ``claude -p`` runs the hook synchronously and shows nothing of an exit 2, so
  waiting there would only hang the run: the host's command line (``CLAUDE_PID``) says
  whether its input is stream-json; when it cannot be read, nothing waits.
- It claims only while the session is idle: once a turn runs (a prompt, a Stop hook's
  continuation, a tool call; read from the transcript, ``transports/turn_watch.py``) it
  exits 0 and leaves the change to that turn's hooks; the turn's Stop arms a new wait.
- One waiter per session: each Stop writes its pid into the session's folder, and an
  older waiter that sees another pid there exits. It also exits when the host ends, or
  when the host's input (a pipe) has ended: the host then waits for its background
  hooks before it exits, and a waiter would hold it up to the hook's timeout.
- Only a real delivery exits 2 (a Stop hook that always exits 2 would wake the session
  for ever). The delivery goes through the follow transport's reservation and the shared
  handoff (``transports/handoff.py``): committed once written to stderr, released
  otherwise. Everything else, failures included, prints nothing and exits 0, well before
  the hook's timeout in ``hooks/hooks.json``.

Standard library only at import, like ``hook deliver``: it runs at every Stop.
"""

from __future__ import annotations

import os
import select
import sys
import time

from agentmonitors.delivery.heartbeats import session_listening
from agentmonitors.fastpath.argv import VALUE, Spec, parse_strict
from agentmonitors.paths import fit_socket_path, session_marker, workspace_socket
from agentmonitors.transports.handoff import COMMITTED, LAPSED, UNWRITTEN, hand_off
from agentmonitors.transports.hosts.base import decode_object
from agentmonitors.transports.hosts.claude_code import ADAPTER
from agentmonitors.transports.turn_watch import TurnWatch
from agentmonitors.workspace import live_setting

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply

WAKE = 2
"""The exit code that makes Claude Code queue the hook's stderr as a new turn."""
HOOK_TIMEOUT_S = 86_400
"""The hook's ``timeout`` in ``hooks/hooks.json`` (a test holds the two equal): a waiter
that has run out ends, and only the next Stop arms another, so it is long."""
MAX_WAIT_S = HOOK_TIMEOUT_S - 600
"""When a waiter gives up: well before the host would kill it (a kill is no wake)."""
POLL_S = 0.2
"""Between reservations: a settled change wakes the session within this of settling."""
RECONNECT_S = 1.0
"""Between attempts while the daemon is unreachable (it may be restarting)."""
HOLD_S = 10.0
"""The longest wait on the daemon before the waiter looks for a follower again."""
FIND_SESSION_S = 10.0
"""How long a Stop waits for its session to be registered before giving up."""
SLOT_FILE = "rewake.pid"
FRAME = "Live update from agentmonitors (not an error, and not from the user):\n"
"""First line of the hook's stderr. Claude Code 2.1.332 shows it under the hook entry's
``rewakeSummary`` with its ``rewakeMessage`` before it (internal fields, measured to be
honoured); a host that ignores them says "Stop hook feedback" and "Stop hook blocking
error from command ...", and this line still tells the model what it reads."""
REWAKE_SUMMARY = "AgentMon live update"
"""``rewakeSummary`` in ``hooks/hooks.json``: the task notification's one-line label."""
REWAKE_MESSAGE = "AgentMon woke this idle session."
"""``rewakeMessage`` in ``hooks/hooks.json``: shown before the stderr."""
FOLLOW = "follow"
"""The transport this reserves through, and whose heartbeat means a follower runs."""

REWAKE_OPTIONS: Spec = {"--socket": ("socket", VALUE, None)}
"""Kept equal to the click declaration by tests/fastpath/test_argv.py."""


def run_hook_rewake(args: list[str]) -> int:
    """Entry point of ``agentmonitors hook rewake``: 2 with a delivery on stderr, else 0."""
    parsed = parse_strict(REWAKE_OPTIONS, args)
    if isinstance(parsed, str):
        sys.stderr.write(f"error: {parsed}\n")  # said, but a hook never breaks the session
        return 0
    try:
        raw = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
        data = decode_object(raw)
        if data is None:
            return 0
        text = wait_for_delivery(data, parsed.get("socket"), os.environ)
    except Exception:  # never a traceback or a stray exit code from a hook
        return 0
    return WAKE if text else 0


def follower_running(tasks: object) -> bool:
    """Whether the Stop input's ``background_tasks`` lists a running follower of ours:
    the plugin's monitor or a Monitor the agent started on ``agentmonitors events follow``."""
    if not isinstance(tasks, list):
        return False
    for task in tasks:
        if not isinstance(task, dict):
            continue
        status = task.get("status")
        if isinstance(status, str) and status.lower() not in ("running", "pending", "starting"):
            continue
        command = task.get("command")
        command = command.lower() if isinstance(command, str) else ""
        description = task.get("description")
        description = description.lower() if isinstance(description, str) else ""
        if ("agentmonitors" in command and "events follow" in command) or (
            "agentmonitors" in description
        ):
            return True
    return False


def host_argv(pid_text: str | None) -> list[str] | None:
    """The command line of the Claude Code process (``CLAUDE_PID``); None if unreadable."""
    if not pid_text or not pid_text.isdigit():
        return None
    if os.path.isdir("/proc"):
        try:
            with open(f"/proc/{pid_text}/cmdline", "rb") as handle:
                raw = handle.read()
        except OSError:
            return None
        # Empty for a process that exited (a zombie): nothing to wake.
        words = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
        return words or None
    # Lazy: only a host without /proc (macOS) asks ps, once per Stop.
    import subprocess

    try:
        done = subprocess.run(
            ["ps", "-o", "args=", "-p", pid_text],
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.decode("utf-8", "replace").split()
    return words if done.returncode == 0 and words else None


def can_wake(argv: list[str] | None) -> bool:
    """Whether an exit 2 starts a turn in this host: interactive, or ``-p`` reading
    stream-json; a plain ``-p`` (or a command line we cannot read) never waits."""
    if argv is None:
        return False
    words = argv[1:]
    if "-p" not in words and "--print" not in words:
        return True
    for index, word in enumerate(words):
        if word == "--input-format=stream-json":
            return True
        if word == "--input-format" and words[index + 1 : index + 2] == ["stream-json"]:
            return True
    return False


def wait_for_delivery(
    data: Mapping[str, object], socket: str | None, env: Mapping[str, str]
) -> str:
    """Wait for this Stop's session's next delivery; the text written to stderr, or ""."""
    payload = ADAPTER.normalise(data)
    host_session_id = payload.session_id
    if host_session_id is None or payload.hook_event_name != ADAPTER.stop_event:
        return ""
    workspace, state = ADAPTER.project(payload)
    if not state.enabled or live_setting(state.live) is False:
        return ""
    slot = os.path.join(workspace, session_marker(host_session_id), SLOT_FILE)
    # Taken before anything else: a Stop that stays out still retires an older waiter.
    if not _take_slot(slot):
        return ""
    try:
        if follower_running(data.get("background_tasks")):
            return ""
        host_pid = env.get("CLAUDE_PID")
        if not can_wake(host_argv(host_pid)):
            return ""
        if socket is not None:
            socket = fit_socket_path(socket, explicit=True, warn=_quiet)
        elif state.socket is not None:
            # As `hook deliver` does: a repository's `socket:` counts only when it is ours.
            # Silently: this stderr is what the model may read.
            socket = fit_socket_path(workspace_socket(workspace, state, notice=_quiet))
        else:
            return ""
        transcript = data.get("transcript_path")
        turn = TurnWatch(transcript if isinstance(transcript, str) else None)
        waiter = Waiter(host_session_id, socket, slot, host_pid, turn=turn)
        try:
            return waiter.run()
        finally:
            waiter.close()
    finally:
        _leave_slot(slot)


def _quiet(line: str) -> None:
    del line


def _take_slot(slot: str) -> bool:
    """Write this process's pid where the session's waiter is named (atomically)."""
    if not os.path.isdir(os.path.dirname(slot)):
        return False  # the session never registered here
    temporary = f"{slot}.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="ascii") as handle:
            handle.write(str(os.getpid()))
        os.replace(temporary, slot)
    except OSError:
        return False
    return True


def _holds_slot(slot: str) -> bool:
    try:
        with open(slot, encoding="ascii") as handle:
            return handle.read().strip() == str(os.getpid())
    except OSError:
        return False


def _leave_slot(slot: str) -> None:
    if _holds_slot(slot):
        try:
            os.unlink(slot)
        except OSError:
            return


def _alive(pid_text: str | None) -> bool:
    if not pid_text or not pid_text.isdigit():
        return True  # nothing to watch: the other checks end the wait
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _input_pipe(pid_text: str | None) -> int | None:
    """A second read end of the host's input, when that input is a pipe: it reports the
    hang-up a pipe gives once its last writer has gone, and taking nothing from it leaves
    the host's input whole. None for a terminal, a socket, or no ``/proc``."""
    if not pid_text or not pid_text.isdigit():
        return None
    path = f"/proc/{pid_text}/fd/0"
    try:
        if not os.readlink(path).startswith("pipe:"):
            return None
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None


def _hung_up(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, 0)  # hang-ups and errors only: data in the pipe is the host's
    return any(mask & select.POLLHUP for _fd, mask in poller.poll(0))


def _input_ended(pid_text: str | None) -> bool:
    """Whether the host reads its input from a pipe that nobody can write to any more."""
    fd = _input_pipe(pid_text)
    if fd is None:
        return False
    try:
        return _hung_up(fd)
    finally:
        os.close(fd)


class Waiter:
    """One background wait: reserve through the follow transport until a delivery or a
    reason to stop, then write it to stderr and commit it."""

    def __init__(
        self,
        host_session_id: str,
        socket: str,
        slot: str,
        host_pid: str | None,
        *,
        turn: TurnWatch | None = None,
        ipc: Callable[[str, dict[str, Any]], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        max_wait_s: float = MAX_WAIT_S,
    ) -> None:
        self.host_session_id = host_session_id
        self.socket = socket
        self.slot = slot
        self.host_pid = host_pid
        self.turn = turn or TurnWatch(None)
        self._ipc = ipc
        self.clock = clock
        self.sleep = sleep
        self.max_wait_s = max_wait_s
        self.session_id: str | None = None
        self._push: Any = None
        # Held while asleep on the daemon, so the input's end wakes the wait too.
        self._input_fd: int | None = None

    def ipc(self, method: str, params: dict[str, Any]) -> Any:
        if self._ipc is not None:
            return self._ipc(method, params)
        # Lazy: a Stop that stays out (no project, a follower, a plain -p) never
        # loads the daemon client.
        from agentmonitors.daemon.client import call

        return call(self.socket, method, params)

    def run(self) -> str:
        """Wait; the delivery written to stderr, or "" when the wait ended without one."""
        # Lazy: as in ipc(), only a waiter that talks to the daemon loads its errors.
        from agentmonitors.daemon.client import DaemonConnectionError

        started = self.clock()
        while self.clock() - started < self.max_wait_s:
            if not _holds_slot(self.slot) or not _alive(self.host_pid):
                return ""
            if _input_ended(self.host_pid):
                # Its input ended: the host only waits for its background hooks (this
                # one) before it exits, and no turn will come that a wake could start.
                return ""
            if self.turn.turn_started():
                # The turn's own hooks deliver now; its Stop arms the next wait.
                return ""
            try:
                text, again = self.poll(started)
            except DaemonConnectionError:
                text, again = "", RECONNECT_S
            if text or again is None:
                return text
            self.pause(again, started)
        return ""

    def pause(self, seconds: float, started: float) -> None:
        """Until the next poll. With the real daemon, asleep until it says the session
        may have news (``delivery.wait``), a turn starts (the transcript changes),
        another Stop takes the slot or the host exits: each of those wakes this process,
        nothing else does (where the OS cannot say, it polls as before)."""
        push = self._wait_on_daemon() if seconds == POLL_S else None
        hold = min(HOLD_S, self.max_wait_s - (self.clock() - started))
        if not push or not push.watching or not push.wait(max(0.01, hold), self._input_fd):
            self.sleep(seconds)

    def _wait_on_daemon(self) -> Any:
        if self._ipc is not None or self.session_id is None:
            return None
        if self._push is None:
            # Lazy: only a waiter that reached the daemon and must wait loads its wait.
            from agentmonitors.transports.follow_wait import PushWait

            push = PushWait(self.socket, self.session_id)
            push.open()
            self._input_fd = _input_pipe(self.host_pid)
            push.watch_file(self.slot)
            if self.turn.path is not None:
                push.watch_file(self.turn.path)
            self._push = push
            if self.host_pid and self.host_pid.isdigit():
                try:
                    push.watch_fd(os.pidfd_open(int(self.host_pid)))
                except (AttributeError, OSError):
                    self._push = False  # no way to hear the host exit: poll
                    push.close()
        return self._push

    def close(self) -> None:
        if self._push:
            self._push.close()
        self._push = None
        if self._input_fd is not None:
            os.close(self._input_fd)
            self._input_fd = None

    def poll(self, started: float) -> tuple[str, float | None]:
        """One step: (the delivery written, or ""; the pause before the next, None to stop)."""
        if self.session_id is None:
            self.session_id = self.find_session()
            if self.session_id is None:
                stop = self.clock() - started >= FIND_SESSION_S
                return "", None if stop else RECONNECT_S
        if session_listening(FOLLOW, self.session_id):
            return "", None  # a follower delivers live to this session: stay out
        # The daemon's own shape (delivery/wire.py), checked where it is read.
        reply: RenderedReply | None = self.ipc(
            "delivery.reserveRendered",
            {"transport": FOLLOW, "sessionId": self.session_id, "socketPath": self.socket},
        )
        session = reply.get("session") if isinstance(reply, dict) else None
        if not isinstance(session, dict):
            return "", None
        if session.get("status") != "active":
            return "", None  # the session ended or went dormant: nothing will wake it
        written: list[str] = []

        def write(text: str) -> bool:
            framed = FRAME + text
            try:
                sys.stderr.write(framed + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                return False
            written.append(framed)
            return True

        try:
            outcome = hand_off(self.ipc, reply, write)
        except Exception:
            if written:
                return written[0], None  # written: the model reads it; it may come again
            raise
        if outcome in (COMMITTED, LAPSED) and written:
            return written[0], None
        return "", None if outcome == UNWRITTEN else POLL_S

    def find_session(self) -> str | None:
        """The AgentMon session this host session is registered as, if it is active."""
        sessions = self.ipc("session.list", {})
        for session in sessions if isinstance(sessions, list) else ():
            if (
                isinstance(session, dict)
                and session.get("hostSessionId") == self.host_session_id
                and session.get("status") == "active"
                and isinstance(session.get("id"), str)
            ):
                found: str = session["id"]
                return found
        return None

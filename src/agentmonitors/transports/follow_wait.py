"""The follower's side of ``delivery.wait``: sleep until the daemon says look.

One request held open by the daemon (``daemon/live_waits.py``) until the session may
have news or the hold ends; meanwhile this process sleeps in one ``select`` on the
socket and on a pipe that a stop (SIGTERM, stdout gone) writes to, so a stop never
waits out the hold. Standard library only, like the daemon client.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from agentmonitors.daemon.client import (
    DaemonApplicationError,
    DaemonConnectionError,
    DaemonUnsupportedError,
)
from agentmonitors.daemon.protocol import (
    MAX_REPLY_BYTES,
    decode_json_line,
    encode_message,
    is_unsupported_reply,
)
from agentmonitors.paths import socket_problem
from agentmonitors.transports.file_watch import FileWatch

__all__ = ["Interrupter", "PushWait", "poll_until_written", "wait_for_change"]

SLACK_S = 5.0
"""Beyond the hold, how long an answer may take before the daemon counts as stalled."""


class Interrupter:
    """A self-pipe: :meth:`interrupt` (safe in a signal handler) ends a wait at once."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)

    def interrupt(self) -> None:
        with contextlib.suppress(OSError):  # full (already interrupted) or closed
            os.write(self.write_fd, b"x")

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _unreachable(socket_path: str, reason: str) -> DaemonConnectionError:
    return DaemonConnectionError(
        f"Cannot reach AgentMon daemon at {socket_path}: {reason}", socket_path
    )


def _connect(socket_path: str, payload: bytes) -> socket.socket:
    problem = socket_problem(socket_path)
    if problem is not None:
        raise _unreachable(socket_path, problem)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(SLACK_S)
        sock.connect(socket_path)
        sock.sendall(payload)
    except OSError as error:
        sock.close()
        raise _unreachable(socket_path, error.strerror or str(error)) from error
    sock.setblocking(False)
    return sock


def _read_line(
    sock: socket.socket, socket_path: str, deadline: float, poller: select.poll
) -> bytes | None:
    """The reply line, or None when another registered descriptor spoke first."""
    buffer = bytearray()
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DaemonConnectionError(
                f"Timed out waiting for AgentMon daemon at {socket_path}",
                socket_path,
                timed_out=True,
            )
        ready = {fd for fd, _mask in poller.poll(left * 1000)}
        if ready - {sock.fileno()}:
            return None
        if not ready:
            continue
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            continue
        except OSError as error:
            raise _unreachable(socket_path, error.strerror or str(error)) from error
        if not chunk:
            raise _unreachable(socket_path, "connection closed before a complete reply")
        buffer += chunk
        if len(buffer) > MAX_REPLY_BYTES:
            raise _unreachable(socket_path, "reply too large")
    return bytes(buffer[: buffer.index(b"\n")])


def wait_for_change(
    socket_path: str,
    params: dict[str, Any],
    hold_s: float,
    interrupter: Interrupter,
    hangup_fd: int | None = None,
    wake_fds: tuple[int, ...] = (),
) -> Any:
    """``delivery.wait``'s result, or None when interrupted first (or ``hangup_fd``,
    the follower's stdout, lost its reader, or one of ``wake_fds`` became readable).

    Raises what :func:`~agentmonitors.daemon.client.call` raises:
    ``DaemonUnsupportedError`` from a daemon without the method (the caller polls
    instead), ``DaemonConnectionError`` when the daemon is away or stalled.
    """
    request_id = os.urandom(12).hex()
    request = {**params, "holdMs": int(hold_s * 1000)}
    payload = encode_message({"id": request_id, "method": "delivery.wait", "params": request})
    sock = _connect(socket_path, payload)
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        poller.register(interrupter.read_fd, select.POLLIN)
        if hangup_fd is not None:
            poller.register(hangup_fd, 0)  # errors and hang-ups only
        for fd in wake_fds:
            poller.register(fd, select.POLLIN)
        line = _read_line(sock, socket_path, time.monotonic() + hold_s + SLACK_S, poller)
    finally:
        sock.close()
    if line is None:
        return None
    try:
        reply = decode_json_line(line)
    except (ValueError, RecursionError):
        raise _unreachable(socket_path, "garbled reply (not JSON)") from None
    if not isinstance(reply, dict) or reply.get("id") not in (request_id, None):
        raise _unreachable(socket_path, "garbled reply")
    if is_unsupported_reply(reply):
        raise DaemonUnsupportedError("delivery.wait is not supported", socket_path)
    if "error" in reply:
        raise DaemonApplicationError(str(reply["error"]), socket_path)
    return reply.get("result")


class PushWait:
    """A follower's waits on the daemon: the session's version last seen, and whether
    this daemon pushes at all (an older one does not: the follower polls then)."""

    def __init__(self, socket_path: str, session_id: str) -> None:
        self.socket_path = socket_path
        self.session_id = session_id
        self.version: int | None = None
        """None before the first answer: the first wait returns at once."""
        self.pushes = True
        self.interrupter: Interrupter | None = None
        self.files: dict[str, FileWatch] = {}
        self.file_changed = False
        """Whether a watched file changed during the last wait."""
        self.quiet = False
        """Whether the last wait's hold ended with nothing new and the daemon kept the
        session active (``kept``; a daemon from before it never says so)."""
        self._fds: list[int] = []

    def watch_file(self, path: str) -> None:
        """Wake for changes to ``path`` too (the enable file), where the OS can say."""
        if path not in self.files:
            self.files[path] = FileWatch(path)

    def watch_fd(self, fd: int) -> None:
        """Wake when ``fd`` turns readable (a process's pidfd); closed with this."""
        self._fds.append(fd)

    @property
    def watching(self) -> bool:
        """Whether a change to each watched file ends a wait (False: look at them often)."""
        return all(watch.fd is not None for watch in self.files.values())

    def open(self) -> None:
        self.interrupter = Interrupter()

    def interrupt(self) -> None:
        if self.interrupter is not None:
            self.interrupter.interrupt()

    def close(self) -> None:
        interrupter, self.interrupter = self.interrupter, None
        if interrupter is not None:
            interrupter.close()
        for watch in self.files.values():
            watch.close()
        self.files.clear()
        fds, self._fds = self._fds, []
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def wait(self, hold_s: float, hangup_fd: int | None) -> bool:
        """Sleep until the daemon says look, the hold ends or a stop; False when this
        daemon cannot push (the caller polls)."""
        if not self.pushes or self.interrupter is None:
            return False
        self.quiet = False
        params = {"sessionId": self.session_id, "since": self.version}
        wake_fds = tuple(
            [watch.fd for watch in self.files.values() if watch.fd is not None] + self._fds
        )
        try:
            reply = wait_for_change(
                self.socket_path, params, hold_s, self.interrupter, hangup_fd, wake_fds
            )
        except DaemonUnsupportedError:
            self.pushes = False
            return False
        except (DaemonConnectionError, DaemonApplicationError):
            self.version = None  # the next poll says what is wrong
            return True
        finally:
            changed = [watch.changed() for watch in self.files.values()]
            self.file_changed = any(changed)
        if isinstance(reply, dict) and isinstance(reply.get("version"), int):
            self.version = reply["version"]
            self.quiet = reply.get("why") == "hold" and reply.get("kept") is True
        return True


def _stamp(db_path: str) -> tuple[int, ...]:
    """What changes when the daemon writes: the database and its write-ahead log."""
    stamp: list[int] = []
    for path in (db_path, f"{db_path}-wal"):
        try:
            found = os.stat(path)
        except OSError:
            stamp += [0, 0]
            continue
        stamp += [found.st_mtime_ns, found.st_size]
    return tuple(stamp)


def poll_until_written(
    db_path: str | None,
    seconds: float,
    stop: threading.Event,
    clock: Callable[[], float],
    every_s: float,
) -> None:
    """For a daemon that cannot push: ``seconds``, or less when the database's files
    change (looked at every ``every_s``), or until ``stop``."""
    if db_path is None:
        stop.wait(seconds)
        return
    before = _stamp(db_path)
    deadline = clock() + seconds
    while clock() < deadline:
        if stop.wait(every_s) or _stamp(db_path) != before:
            return

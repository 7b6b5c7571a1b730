"""Blocking client for the daemon socket.

Hooks call this on every turn, so it is plain ``socket`` + ``json`` (no asyncio),
both imported on the first call (docs/architecture.md, "Speed"), and it never waits
longer than its timeout. Failures come in three kinds, because
callers react differently: an unreachable daemon (fall back in-process or lazy-boot),
an older daemon that does not know the request (fall back), and an answer that is an
error (report it verbatim). A socket this user's agentmonitors did not create is never
connected to (docs/architecture.md, "Where trusted state lives"): it counts as unreachable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from agentmonitors.daemon.protocol import (
    MAX_REPLY_BYTES,
    PING_TIMEOUT_S,
    REQUEST_TIMEOUT_S,
    decode_json_line,
    encode_message,
    is_unsupported_reply,
)
from agentmonitors.paths import socket_problem

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from socket import socket as Socket
    from typing import Any

__all__ = [
    "DaemonApplicationError",
    "DaemonConnectionError",
    "DaemonError",
    "DaemonRefusedError",
    "DaemonUnsupportedError",
    "call",
    "ping",
]

_RECV_CHUNK = 65536


class DaemonError(Exception):
    """Base of every failure :func:`call` raises."""

    def __init__(self, message: str, socket_path: str) -> None:
        super().__init__(message)
        self.message = message
        self.socket_path = socket_path


class DaemonConnectionError(DaemonError):
    """No usable answer: socket absent or refused, timeout, dropped or garbled reply."""

    def __init__(self, message: str, socket_path: str, *, timed_out: bool = False) -> None:
        super().__init__(message, socket_path)
        self.timed_out = timed_out


class DaemonRefusedError(DaemonConnectionError):
    """Not connected at all: the socket, or its folder, is not this user's own.

    ``message`` names the path and why; a hook treats it as an unreachable daemon.
    """


class DaemonUnsupportedError(DaemonError):
    """The daemon answered but does not understand the request (an older daemon)."""


class DaemonApplicationError(DaemonError):
    """The daemon ran the request and answered with an error; ``message`` is verbatim."""


def _timed_out(socket_path: str) -> DaemonConnectionError:
    return DaemonConnectionError(
        f"Timed out waiting for AgentMon daemon at {socket_path}", socket_path, timed_out=True
    )


def _unreachable(socket_path: str, reason: str) -> DaemonConnectionError:
    return DaemonConnectionError(
        f"Cannot reach AgentMon daemon at {socket_path}: {reason}", socket_path
    )


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def _remaining(deadline: float, socket_path: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timed_out(socket_path)
    return left


def _exchange(sock: Socket, socket_path: str, payload: bytes, deadline: float) -> bytes:
    """Send ``payload``, return the reply line without its newline."""
    send_error: OSError | None = None
    try:
        sock.settimeout(_remaining(deadline, socket_path))
        sock.sendall(payload)
    except TimeoutError:
        raise _timed_out(socket_path) from None
    except OSError as error:
        # The daemon may have answered and closed before reading everything (an
        # over-long request gets a reply after the first megabyte): the answer can
        # still be waiting in our receive buffer, so read before giving up.
        send_error = error
    buffer = bytearray()
    while True:
        try:
            sock.settimeout(_remaining(deadline, socket_path))
            chunk = sock.recv(_RECV_CHUNK)
        except TimeoutError:
            raise _timed_out(socket_path) from None
        except OSError as error:
            raise _unreachable(socket_path, _reason(send_error or error)) from error
        if not chunk:
            reason = (
                _reason(send_error)
                if send_error is not None
                else "connection closed before a complete reply"
            )
            raise _unreachable(socket_path, reason)
        newline = chunk.find(b"\n")
        if newline >= 0:
            buffer += chunk[:newline]
            return bytes(buffer)
        buffer += chunk
        if len(buffer) > MAX_REPLY_BYTES:
            raise _unreachable(socket_path, "reply too large")


def call(
    socket_path: str,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> Any:
    """Send one request and return its ``result`` (which may be None).

    ``timeout_s`` bounds the whole exchange: connect, send and the reply.
    """
    request_id = os.urandom(12).hex()
    payload = encode_message({"id": request_id, "method": method, "params": dict(params or {})})
    deadline = time.monotonic() + timeout_s
    problem = socket_problem(socket_path)
    if problem is not None:
        raise DaemonRefusedError(
            f"Refusing to connect to {socket_path}: {problem}. agentmonitors only talks to a"
            " daemon socket you own, in a folder only you can write.",
            socket_path,
        )
    # Lazy: socket costs 4 ms (enum, selectors), which a hook that never calls must not pay.
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.settimeout(_remaining(deadline, socket_path))
            sock.connect(socket_path)
        except TimeoutError:
            raise _timed_out(socket_path) from None
        except OSError as error:
            raise _unreachable(socket_path, _reason(error)) from error
        line = _exchange(sock, socket_path, payload, deadline)
    finally:
        sock.close()
    try:
        reply = decode_json_line(line)
    except (ValueError, RecursionError):
        raise _unreachable(socket_path, "garbled reply (not JSON)") from None
    if not isinstance(reply, dict):
        raise _unreachable(socket_path, "garbled reply (not a JSON object)")
    if is_unsupported_reply(reply):
        message = reply.get("error")
        raise DaemonUnsupportedError(
            message if isinstance(message, str) else "Unsupported request.", socket_path
        )
    if reply.get("id") != request_id:
        raise _unreachable(socket_path, "garbled reply (answer to another request)")
    if "error" in reply:
        message = reply["error"]
        text = message if isinstance(message, str) else str(message)
        raise DaemonApplicationError(text, socket_path)
    return reply.get("result")


def ping(socket_path: str, timeout_s: float = PING_TIMEOUT_S) -> bool:
    """Whether a daemon answers ``ping`` at ``socket_path`` within ``timeout_s``."""
    try:
        call(socket_path, "ping", {}, timeout_s=timeout_s)
    except DaemonError:
        return False
    return True

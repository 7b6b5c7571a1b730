"""Whether an idle Codex thread may be woken: asked of Codex's own app-server daemon.

See docs/architecture.md, "Transports" (codex-queue). Measured with Codex 0.169.0:
its managed app-server answers JSON-RPC over a WebSocket (``GET /rpc``) on the Unix
socket ``<CODEX_HOME>/app-server-control/app-server-control.sock``; ``thread/read``
gives a loaded thread's status (``idle`` or active) and its folder. The daemon keeps a
thread loaded after its TUI has closed and would run a queued turn unseen, and nothing
in the protocol or in ``CODEX_HOME`` says whether a TUI still holds it, so a TUI is
looked for among the user's processes: a ``codex`` client of this ``CODEX_HOME`` (not
its app-server, not ``--no-daemon``, not a non-interactive subcommand) running in the
thread's folder. Where processes cannot be read (no ``/proc``) nothing is queued and
the hooks deliver. Standard library only.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
from typing import Any

from agentmonitors.delivery.codex_home import codex_home
from agentmonitors.fastpath.lazy_logging import get_logger

__all__ = [
    "BINARY",
    "ThreadState",
    "codex_home",
    "control_socket",
    "managed_cli",
    "thread_state",
    "tui_holds",
]

log = get_logger(__name__)

BINARY = "codex"
"""The CLI's executable name (the native binary and its npm launcher alike)."""
PROBE_TIMEOUT_S = 2.0
MAX_FRAME_BYTES = 8 << 20
# Subcommands that are no interactive TUI (a TUI is `codex`, `codex resume`, `codex fork`
# or `codex <prompt>`).
NOT_A_TUI = frozenset(
    {
        "exec", "e", "app-server", "queue", "mcp", "mcp-server", "login", "logout",
        "apply", "a", "completion", "sandbox", "debug", "cloud", "features", "review",
    }
)  # fmt: skip


class ThreadState:
    """What Codex's daemon says of one thread: idle or not, and its folder."""

    __slots__ = ("cwd", "idle")

    def __init__(self, idle: bool, cwd: str | None) -> None:
        self.idle = idle
        self.cwd = cwd


def control_socket(home: str) -> str:
    return os.path.join(home, "app-server-control", "app-server-control.sock")


def managed_cli(home: str) -> str | None:
    """The CLI of the managed daemon itself (``<CODEX_HOME>/packages/app-server-daemon/
    current/bin/codex``, which ``codex app-server daemon`` reports), when it is there:
    the version that serves the thread, found whatever PATH the hooks had."""
    path = os.path.join(home, "packages", "app-server-daemon", "current", "bin", BINARY)
    return path if os.access(path, os.X_OK) else None


def _frame(text: str) -> bytes:
    """One masked text frame (a client must mask)."""
    data = text.encode("utf-8")
    mask = os.urandom(4)
    size = len(data)
    if size < 126:
        head = bytes([0x81, 0x80 | size])
    elif size < 65536:
        head = bytes([0x81, 0x80 | 126]) + struct.pack(">H", size)
    else:
        head = bytes([0x81, 0x80 | 127]) + struct.pack(">Q", size)
    return head + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readexactly(2)
    size = head[1] & 0x7F
    if size == 126:
        size = struct.unpack(">H", await reader.readexactly(2))[0]
    elif size == 127:
        size = struct.unpack(">Q", await reader.readexactly(8))[0]
    if size > MAX_FRAME_BYTES:
        raise ValueError("frame too large")
    mask = await reader.readexactly(4) if head[1] & 0x80 else b""
    data = await reader.readexactly(size)
    if mask:
        data = bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))
    return head[0] & 0x0F, data


async def _call(socket_path: str, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """``initialize``, then one request; its ``result`` (None on an error answer)."""
    reader, writer = await asyncio.open_unix_connection(socket_path)
    try:
        key = base64.b64encode(os.urandom(16)).decode("ascii")
        writer.write(
            (
                "GET /rpc HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode("ascii")
        )
        status = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n", 1)[0]:
            raise ValueError("no WebSocket upgrade")
        hello = {"clientInfo": {"name": "agentmonitors", "version": "1"}}
        writer.write(_frame(json.dumps({"id": 1, "method": "initialize", "params": hello})))
        writer.write(_frame(json.dumps({"method": "initialized"})))
        writer.write(_frame(json.dumps({"id": 2, "method": method, "params": params})))
        await writer.drain()
        while True:
            opcode, data = await _read_frame(reader)
            if opcode == 0x8:
                raise ValueError("closed by Codex")
            if opcode != 0x1:
                continue
            message = json.loads(data)
            if isinstance(message, dict) and message.get("id") == 2:
                result = message.get("result")
                return result if isinstance(result, dict) else None
    finally:
        writer.close()


async def thread_state(home: str, thread_id: str) -> ThreadState | None:
    """The thread as Codex's daemon holds it; None when no daemon answers for this home
    (``--no-daemon``, or none running) or it does not hold the thread."""
    # The control socket is a link to a short path under /tmp: connect to that, since
    # a CODEX_HOME deep enough makes the link's own path too long for AF_UNIX.
    socket_path = os.path.realpath(control_socket(home))
    if not os.path.exists(socket_path):
        return None
    try:
        result = await asyncio.wait_for(
            _call(socket_path, "thread/read", {"threadId": thread_id}), PROBE_TIMEOUT_S
        )
    except (OSError, ValueError, EOFError, TimeoutError, asyncio.IncompleteReadError) as error:
        log.info("Codex daemon at %s did not answer: %s", socket_path, error)
        return None
    thread = result.get("thread") if result else None
    if not isinstance(thread, dict):
        return None
    status = thread.get("status")
    idle = isinstance(status, dict) and status.get("type") == "idle"
    cwd = thread.get("cwd")
    return ThreadState(idle, cwd if isinstance(cwd, str) else None)


def _is_tui(argv: list[str]) -> bool:
    """A ``codex`` client in the foreground: the binary or its launcher, no subcommand
    that is not interactive, not ``--no-daemon``."""
    for index, arg in enumerate(argv[:2]):
        if os.path.basename(arg) == BINARY:
            rest = argv[index + 1 :]
            positional = [word for word in rest if not word.startswith("-")]
            if "--no-daemon" in rest:
                return False
            return not positional or positional[0] not in NOT_A_TUI
    return False


def _environ(pid: str) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as handle:
        raw = handle.read(1 << 20)
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(errors="replace"): value.decode(errors="replace") for key, _, value in pairs}


def tui_holds(home: str, folder: str) -> bool:
    """Whether a Codex TUI of ``home`` runs in ``folder`` (False where unknowable)."""
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return False
    uid = os.getuid()
    home_real, folder_real = os.path.realpath(home), os.path.realpath(folder)
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = [part.decode(errors="replace") for part in handle.read(1 << 16).split(b"\0")]
            if not _is_tui([part for part in argv if part]):
                continue
            if os.path.realpath(os.readlink(f"/proc/{pid}/cwd")) != folder_real:
                continue
            if os.path.realpath(codex_home(_environ(pid))) == home_real:
                return True
        except OSError:
            continue
    return False

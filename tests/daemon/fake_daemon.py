"""A fake daemon on a real Unix socket, for the clients' side of the protocol.

It answers each request line as the test says (or holds the connection and says
nothing): an older daemon, a misbehaving one, a scripted reply.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator

Responder = Callable[[bytes, socket.socket], None]


@contextlib.contextmanager
def short_socket_path(prefix: str) -> Iterator[str]:
    """A socket path in a fresh folder under /tmp: AF_UNIX paths stop at ~107 bytes, and
    pytest's tmp_path is often longer than that."""
    directory = tempfile.mkdtemp(dir="/tmp", prefix=prefix)
    try:
        yield os.path.join(directory, "d.sock")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class FakeDaemon:
    """Accepts connections on a thread; ``respond`` gets each request line."""

    def __init__(self, path: str, respond: Responder | None) -> None:
        self.lines: list[bytes] = []
        self._respond = respond
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(8)
        self._listener.settimeout(0.05)
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            if self._respond is None:
                self._held.append(conn)  # accept, then say nothing at all
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                line = data.split(b"\n", 1)[0]
                self.lines.append(line)
                self._respond(line, conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for conn in self._held:
            conn.close()
        self._listener.close()


def reply_with(payload: object) -> Responder:
    def respond(line: bytes, conn: socket.socket) -> None:
        request = json.loads(line)
        body = payload(request) if callable(payload) else payload
        conn.sendall(json.dumps(body).encode() + b"\n")

    return respond

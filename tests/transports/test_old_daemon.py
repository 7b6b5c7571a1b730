"""A daemon left running across an upgrade, which predates ``hook.reserveRendered``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator

import pytest

from agentmonitors.daemon.protocol import UNSUPPORTED_REPLY
from agentmonitors.transports.deliver import _quiet, deliver_to_session


@pytest.fixture
def old_daemon() -> Iterator[tuple[str, list[str]]]:
    """A socket that knows ``session.list`` and answers anything newer the way an older
    daemon answers an unknown request."""
    directory = tempfile.mkdtemp(dir="/tmp", prefix="amold-")
    path = os.path.join(directory, "d.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    listener.settimeout(0.05)
    methods: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\n" not in data:
                    data += conn.recv(65536)
                request = json.loads(data)
                methods.append(request["method"])
                reply = dict(UNSUPPORTED_REPLY)
                if request["method"] == "session.list":
                    session = {"id": "S1", "hostSessionId": "host-1", "role": "lead"}
                    reply = {"id": request["id"], "result": [session]}
                conn.sendall(json.dumps(reply).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield path, methods
    finally:
        stop.set()
        thread.join()
        listener.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_hook_delivers_nothing_and_says_why_under_debug(
    old_daemon: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, methods = old_daemon
    lines: list[str] = []
    for debug in (_quiet, lines.append):
        delivered = deliver_to_session(
            path,
            "host-1",
            "turn-interruptible",
            event_name="UserPromptSubmit",
            workspace="/nowhere",
            output_format="json",
            debug=debug,
        )
        assert delivered is False
        assert capsys.readouterr().out == ""
    # No step-by-step fallback: it asked for a rendered reservation and nothing else.
    assert "hook.reserve" not in methods and "hook.preview" not in methods
    assert methods.count("hook.reserveRendered") == 2
    assert any(
        line.startswith("stopped: the daemon predates hook.reserveRendered") for line in lines
    )

"""A reply nobody reads gives back what its request took (``Method.undelivered``)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

from agentmonitors.daemon.client import call
from agentmonitors.daemon.server import Method
from tests.daemon.test_server import ServerThread, serve, short_dir, sock  # noqa: F401
from tests.waiting import wait_for

Serve = Callable[..., ServerThread]


def _holding_method(gate: threading.Event, given_back: list[Any]) -> Method:
    async def take(_params: dict[str, Any]) -> Any:
        # The reply is computed only once the test lets it: by then the client of
        # the hang-up case has left, as a hook does when the daemon was stalled.
        while not gate.is_set():
            await asyncio.sleep(0.01)
        return {"reservation": {"reservationId": "r-1"}}

    return Method(take, undelivered=given_back.append)


def test_a_client_that_hung_up_gets_its_hold_given_back(serve: Serve, sock: str) -> None:  # noqa: F811
    gate = threading.Event()
    given_back: list[Any] = []
    serve({"take": _holding_method(gate, given_back)})

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(sock)
    client.sendall(json.dumps({"id": "1", "method": "take", "params": {}}).encode() + b"\n")
    client.close()
    gate.set()

    wait_for(lambda: given_back)
    assert given_back == [{"reservation": {"reservationId": "r-1"}}]


def test_a_reply_that_was_read_keeps_its_hold(serve: Serve, sock: str) -> None:  # noqa: F811
    gate = threading.Event()
    gate.set()
    given_back: list[Any] = []
    serve({"take": _holding_method(gate, given_back)})

    assert call(sock, "take", {}) == {"reservation": {"reservationId": "r-1"}}
    # Another round trip after it: the first connection is fully finished by then.
    assert call(sock, "ping", {}) == {"ok": True}
    assert given_back == []

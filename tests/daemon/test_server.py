"""The IPC server over real Unix sockets, driven by the real blocking client."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agentmonitors.daemon import client
from agentmonitors.daemon.protocol import UNSUPPORTED_REPLY, encode_message
from agentmonitors.daemon.server import (
    DaemonAlreadyRunning,
    DaemonServer,
    Method,
    ParamSpec,
    RequestError,
    params,
    validate_params,
)

UNSUPPORTED_LINE = (
    b'{"id":"invalid","error":"Invalid JSON request.","code":"unsupported_request"}\n'
)


@pytest.fixture
def short_dir() -> Iterator[str]:
    # AF_UNIX paths stop at ~107 bytes; pytest's tmp_path is often longer than that.
    path = tempfile.mkdtemp(dir="/tmp", prefix="amd-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sock(short_dir: str) -> str:
    return os.path.join(short_dir, "d.sock")


class ServerThread:
    """A DaemonServer on its own event loop in a background thread."""

    def __init__(self, socket_path: str, methods: Mapping[str, Method], **options: Any) -> None:
        self.server = DaemonServer(socket_path, methods, **options)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.start_error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            try:
                await self.server.start()
            except BaseException as error:
                self.start_error = error
                self._ready.set()
                return
            self.loop = asyncio.get_running_loop()
            self._ready.set()
            await self.server.serve_forever()

        asyncio.run(main())

    def start(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(10)
        if self.start_error is not None:
            self._thread.join(10)
            raise self.start_error
        return self

    def stop(self) -> None:
        if self.loop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.server.request_stop)
        self._thread.join(10)
        assert not self._thread.is_alive()


@pytest.fixture
def serve(sock: str) -> Iterator[Any]:
    started: list[ServerThread] = []

    def start(methods: Mapping[str, Method] | None = None, **options: Any) -> ServerThread:
        path = options.pop("socket_path", sock)
        thread = ServerThread(path, methods or {}, **options).start()
        started.append(thread)
        return thread

    try:
        yield start
    finally:
        for thread in reversed(started):
            thread.stop()


def raw_exchange(path: str, data: bytes, *, timeout: float = 5.0) -> bytes:
    """Send raw bytes, read until the server closes."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(path)
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def echo(request: dict[str, Any]) -> Any:
    return request


ECHO = Method(echo, params(text=(str, True), count=(int, False), tags=(list, False)))


# --------------------------------------------------------------------------- round trips


def test_round_trip_through_the_real_client(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    result = client.call(sock, "echo", {"text": "héllo ✓ 日本", "count": 3, "tags": ["a"]})
    assert result == {"text": "héllo ✓ 日本", "count": 3, "tags": ["a"]}


def test_ping_is_built_in(serve: Any, sock: str) -> None:
    serve()
    assert client.call(sock, "ping") == {"ok": True}
    assert client.ping(sock) is True


def test_null_result_is_returned_as_none(serve: Any, sock: str) -> None:
    async def nothing(_: dict[str, Any]) -> None:
        return None

    serve({"nothing": Method(nothing)})
    assert client.call(sock, "nothing") is None
    line = raw_exchange(sock, b'{"id":"x1","method":"nothing","params":{}}\n')
    assert line == b'{"id":"x1","result":null}\n'


def test_reply_is_one_compact_line_with_unescaped_non_ascii(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    request = {"id": "r-1", "method": "echo", "params": {"text": "ü\nline2 \u2028"}}
    reply = raw_exchange(sock, json.dumps(request).encode() + b"\n")
    assert reply.count(b"\n") == 1
    assert reply.endswith(b"\n")
    assert "ü".encode() in reply
    assert b" " not in reply.replace(b"line2 ", b"")  # compact separators
    assert json.loads(reply) == {"id": "r-1", "result": {"text": "ü\nline2 \u2028"}}


def test_bytes_after_the_first_newline_are_ignored(serve: Any, sock: str) -> None:
    serve()
    reply = raw_exchange(sock, b'{"id":"a","method":"ping","params":{}}\n{"id":"b"}\n')
    assert reply == b'{"id":"a","result":{"ok":true}}\n'


def test_concurrent_requests_all_answered(serve: Any, sock: str) -> None:
    async def slow(request: dict[str, Any]) -> Any:
        await asyncio.sleep(0.05)
        return request["text"]

    serve({"slow": Method(slow, params(text=(str, True)))})
    results: dict[int, Any] = {}

    def worker(index: int) -> None:
        results[index] = client.call(sock, "slow", {"text": str(index)})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == {i: str(i) for i in range(20)}


# --------------------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b"{nope\n", id="malformed-json"),
        pytest.param(b"\xff\xfe\x00\x01garbage\x80\n", id="binary-garbage"),
        pytest.param(b"[1,2,3]\n", id="not-an-object"),
        pytest.param(b'{"id":"a","method":"ping"}\n', id="missing-params"),
        pytest.param(b'{"id":"a","method":"ping","params":[1]}\n', id="list-params"),
        pytest.param(b'{"id":"a","method":"ping","params":null}\n', id="null-params"),
        pytest.param(b'{"id":"a","method":"ping","params":"x"}\n', id="string-params"),
        pytest.param(b'{"id":7,"method":"ping","params":{}}\n', id="numeric-id"),
        pytest.param(b'{"method":"ping","params":{}}\n', id="missing-id"),
        pytest.param(b'{"id":"a","method":5,"params":{}}\n', id="numeric-method"),
        pytest.param(b'{"id":"a","method":"nope","params":{}}\n', id="unknown-method"),
        pytest.param(b'{"id":"a","method":"ping","params":{"x":NaN}}\n', id="nan"),
        pytest.param(b"[" * 100_000 + b"\n", id="deep-nesting"),
        pytest.param(b"\n", id="empty-line"),
    ],
)
def test_bad_requests_get_the_unsupported_reply(serve: Any, sock: str, line: bytes) -> None:
    serve()
    assert raw_exchange(sock, line) == UNSUPPORTED_LINE
    assert client.ping(sock)


def test_unknown_method_through_the_client_is_unsupported(serve: Any, sock: str) -> None:
    serve()
    with pytest.raises(client.DaemonUnsupportedError, match=r"Invalid JSON request\."):
        client.call(sock, "watch.declare", {})


def test_wrong_param_type_names_method_and_field(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    with pytest.raises(client.DaemonApplicationError) as caught:
        client.call(sock, "echo", {"text": 5})
    assert caught.value.message == "Invalid params for echo: text must be a string"
    with pytest.raises(client.DaemonApplicationError, match="tags must be a list of strings"):
        client.call(sock, "echo", {"text": "a", "tags": ["a", 1]})
    with pytest.raises(client.DaemonApplicationError, match="count must be an integer"):
        client.call(sock, "echo", {"text": "a", "count": True})


def test_missing_required_param_is_an_error_reply(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    reply = raw_exchange(sock, b'{"id":"q","method":"echo","params":{}}\n')
    assert json.loads(reply) == {
        "id": "q",
        "error": "Invalid params for echo: text must be a string (it is missing)",
    }


def test_extra_params_ignored_and_optional_null_dropped(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    result = client.call(sock, "echo", {"text": "a", "count": None, "future": {"x": 1}})
    assert result == {"text": "a", "future": {"x": 1}}


def test_over_long_line_is_unsupported_and_server_survives(serve: Any, sock: str) -> None:
    serve({"echo": ECHO}, max_line_bytes=4096)
    assert raw_exchange(sock, b"x" * 10_000 + b"\n") == UNSUPPORTED_LINE
    # The real client sending far more than the server reads still gets the answer.
    with pytest.raises(client.DaemonUnsupportedError):
        client.call(sock, "echo", {"text": "y" * 2_000_000}, timeout_s=10)
    assert client.call(sock, "echo", {"text": "ok"}) == {"text": "ok"}


def test_read_timeout_answers_and_frees_the_connection(serve: Any, sock: str) -> None:
    serve(read_timeout_s=0.2)
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(sock)
        conn.sendall(b'{"id":"slow","method":')
        reply = conn.recv(4096)
    assert reply == UNSUPPORTED_LINE
    assert time.monotonic() - started < 3
    assert client.ping(sock)


# --------------------------------------------------------------------------- hang-ups


def test_client_disconnecting_mid_request_does_not_hurt(serve: Any, sock: str) -> None:
    serve({"echo": ECHO})
    # Connect and leave; half a line then leave; half a line then half-close.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(sock)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(sock)
        conn.sendall(b'{"id":"a","method":"echo","par')
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(sock)
        conn.sendall(b'{"id":"a","method":"echo","par')
        conn.shutdown(socket.SHUT_WR)
        assert conn.recv(4096) == UNSUPPORTED_LINE
    assert client.call(sock, "echo", {"text": "still here"}) == {"text": "still here"}


def test_client_gone_before_the_reply_is_written(serve: Any, sock: str) -> None:
    finished = threading.Event()

    async def slow(_: dict[str, Any]) -> Any:
        await asyncio.sleep(0.2)
        finished.set()
        return {"big": "z" * 1_000_000}  # more than a socket buffer: the write must fail

    serve({"slow": Method(slow)})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(sock)
        conn.sendall(b'{"id":"a","method":"slow","params":{}}\n')
    assert finished.wait(5)
    time.sleep(0.1)
    assert client.ping(sock)
    assert client.call(sock, "slow", timeout_s=5) == {"big": "z" * 1_000_000}


def test_client_timing_out_leaves_the_server_serving(serve: Any, sock: str) -> None:
    release = threading.Event()

    async def stuck(_: dict[str, Any]) -> Any:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "late"

    serve({"stuck": Method(stuck)})
    with pytest.raises(client.DaemonConnectionError, match="Timed out waiting"):
        client.call(sock, "stuck", timeout_s=0.2)
    release.set()
    assert client.ping(sock)


# --------------------------------------------------------------------------- handler failures


def test_request_error_is_returned_verbatim_without_logging(
    serve: Any, sock: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def refuse(_: dict[str, Any]) -> Any:
        raise RequestError("Session 01J not found")

    serve({"refuse": Method(refuse)})
    with (
        caplog.at_level(logging.ERROR, logger="agentmonitors.daemon"),
        pytest.raises(client.DaemonApplicationError) as caught,
    ):
        client.call(sock, "refuse")
    assert caught.value.message == "Session 01J not found"
    assert not caplog.records


def test_handler_crash_is_answered_and_logged(
    serve: Any, sock: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def crash(_: dict[str, Any]) -> Any:
        raise ValueError("boom")

    async def crash_silently(_: dict[str, Any]) -> Any:
        raise KeyError

    serve({"crash": Method(crash), "silent": Method(crash_silently)})
    with caplog.at_level(logging.ERROR, logger="agentmonitors.daemon"):
        with pytest.raises(client.DaemonApplicationError) as caught:
            client.call(sock, "crash")
        with pytest.raises(client.DaemonApplicationError, match="KeyError"):
            client.call(sock, "silent")
    assert caught.value.message == "boom"
    records = [r for r in caplog.records if r.name == "agentmonitors.daemon"]
    assert records
    assert records[0].exc_info is not None
    assert client.ping(sock)


def test_unencodable_result_is_an_error_reply(
    serve: Any, sock: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def weird(_: dict[str, Any]) -> Any:
        return {"when": object()}

    async def nan(_: dict[str, Any]) -> Any:
        return float("nan")

    serve({"weird": Method(weird), "nan": Method(nan)})
    with caplog.at_level(logging.ERROR, logger="agentmonitors.daemon"):
        with pytest.raises(client.DaemonApplicationError, match="not JSON"):
            client.call(sock, "weird")
        with pytest.raises(client.DaemonApplicationError, match="not JSON"):
            client.call(sock, "nan")
    assert client.ping(sock)


# --------------------------------------------------------------------------- lifecycle


def test_second_server_on_the_same_socket_is_refused(serve: Any, sock: str) -> None:
    serve()
    with pytest.raises(DaemonAlreadyRunning) as caught:
        serve()
    assert str(caught.value) == f"AgentMon daemon is already running at {sock}."
    assert "already running" in str(caught.value)
    assert client.ping(sock)


def test_live_foreign_listener_is_not_replaced(serve: Any, sock: str) -> None:
    # A daemon that does not take our lock (an older build) but answers on the socket.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(sock)
        listener.listen()
        with pytest.raises(DaemonAlreadyRunning):
            serve()
        assert stat.S_ISSOCK(os.lstat(sock).st_mode)


def test_dead_socket_file_is_replaced(serve: Any, sock: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(sock)  # bound, never listening: connect is refused
    assert os.path.exists(sock)
    serve()
    assert client.ping(sock)


def test_non_socket_file_in_the_way_is_refused(serve: Any, sock: str) -> None:
    with open(sock, "w") as handle:
        handle.write("precious")
    with pytest.raises(FileExistsError, match="not a socket"):
        serve()
    with open(sock) as handle:
        assert handle.read() == "precious"


@pytest.mark.slow
def test_socket_left_by_a_killed_daemon_is_recovered(serve: Any, sock: str) -> None:
    code = (
        "import asyncio\n"
        "from agentmonitors.daemon.server import DaemonServer\n"
        "async def main():\n"
        f"    server = DaemonServer({sock!r}, {{}})\n"
        "    await server.start()\n"
        "    print('ready', flush=True)\n"
        "    await server.serve_forever()\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        assert client.ping(sock)
        with pytest.raises(DaemonAlreadyRunning):
            serve()
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)  # SIGKILL left the socket file behind
    assert not client.ping(sock)
    serve()
    assert client.ping(sock)


def test_socket_lock_and_parent_directory_are_private(short_dir: str, serve: Any) -> None:
    path = os.path.join(short_dir, "sub", "d.sock")
    serve(socket_path=path)
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path + ".lock").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700


def test_close_removes_the_socket_and_releases_the_lock(serve: Any, sock: str) -> None:
    thread = serve()
    thread.stop()
    assert not os.path.exists(sock)
    serve()  # the lock is free again
    assert client.ping(sock)


def test_close_keeps_a_socket_that_is_no_longer_ours(sock: str) -> None:
    async def scenario() -> None:
        server = DaemonServer(sock, {})
        await server.start()
        os.unlink(sock)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
            other.bind(sock)
            await server.close()
            assert os.path.exists(sock)
        await server.close()  # idempotent

    asyncio.run(scenario())


def test_stop_method_replies_then_ends_serve_forever(sock: str) -> None:
    holder: list[DaemonServer] = []

    async def stop(_: dict[str, Any]) -> Any:
        holder[0].request_stop()
        return {"stopping": True}

    thread = ServerThread(sock, {"stop": Method(stop)})
    holder.append(thread.server)
    thread.start()
    try:
        assert client.call(sock, "stop") == {"stopping": True}
        deadline = time.monotonic() + 5
        while os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not os.path.exists(sock)
    finally:
        thread.stop()


def test_serve_forever_cancelled_still_cleans_up(sock: str) -> None:
    async def scenario() -> None:
        server = DaemonServer(sock, {})
        await server.start()
        task = asyncio.create_task(server.serve_forever())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not os.path.exists(sock)

    asyncio.run(scenario())


# --------------------------------------------------------------------------- param declarations


def test_params_helper_forms() -> None:
    specs = params(
        a=(str, True),
        b=(int, False),
        c="list[str]?",
        d=ParamSpec("str", required=True, choices=("x", "y")),
        e=(float, False),
        f=(dict, False),
        g=(bool, False),
    )
    assert specs["a"] == ParamSpec("str", required=True)
    assert specs["b"] == ParamSpec("int", required=False)
    assert specs["c"] == ParamSpec("list[str]", required=False)
    assert specs["e"].type == "number"
    assert params() == {}
    with pytest.raises(ValueError, match="unsupported"):
        params(x=(bytes, True))
    with pytest.raises(ValueError, match="unknown"):
        params(x="bytes")


def test_validate_params_rules() -> None:
    specs = params(
        lifecycle=ParamSpec("str", required=True, choices=("turn-idle", "post-compact")),
        maxEvents=ParamSpec("int", minimum=1),
        ttlMs=(float, False),
        flag=(bool, False),
        scope=(dict, False),
        anything=(object, False),
    )
    ok = validate_params("m", specs, {"lifecycle": "turn-idle", "maxEvents": 2.0, "anything": None})
    assert ok == {"lifecycle": "turn-idle", "maxEvents": 2, "anything": None}
    assert isinstance(ok["maxEvents"], int)
    bad = [
        ({"lifecycle": "nope"}, "lifecycle must be one of turn-idle, post-compact"),
        ({"lifecycle": "turn-idle", "maxEvents": 0}, "maxEvents must be an integer >= 1"),
        ({"lifecycle": "turn-idle", "maxEvents": 1.5}, "maxEvents must be an integer >= 1"),
        ({"lifecycle": "turn-idle", "ttlMs": "5"}, "ttlMs must be a number"),
        ({"lifecycle": "turn-idle", "flag": 1}, "flag must be a boolean"),
        ({"lifecycle": "turn-idle", "scope": []}, "scope must be an object"),
        ({"lifecycle": None}, "lifecycle must be one of turn-idle, post-compact (it is missing)"),
    ]
    for received, message in bad:
        with pytest.raises(RequestError) as caught:
            validate_params("hook.claim", specs, received)
        assert str(caught.value) == f"Invalid params for hook.claim: {message}"


def test_dispatch_encodes_with_the_shared_encoder(sock: str) -> None:
    async def scenario() -> bytes:
        server = DaemonServer(sock, {})
        return await server.dispatch(b"garbage\n")

    assert asyncio.run(scenario()) == encode_message(UNSUPPORTED_REPLY)

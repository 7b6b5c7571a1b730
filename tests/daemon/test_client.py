"""The blocking client against fake peers that misbehave in every way a daemon can."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.cli.main import main
from agentmonitors.cli.monitor.daemon_or_store import BUSY_NOTICE
from agentmonitors.daemon import client
from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE, REQUEST_TIMEOUT_S, UNSUPPORTED_REPLY
from tests.daemon.fake_daemon import FakeDaemon, Responder, reply_with, short_socket_path


@pytest.fixture
def sock() -> Iterator[str]:
    with short_socket_path("amc-") as path:
        yield path


@pytest.fixture
def fake(sock: str) -> Iterator[Callable[[Responder | None], FakeDaemon]]:
    made: list[FakeDaemon] = []

    def make(respond: Responder | None) -> FakeDaemon:
        daemon = FakeDaemon(sock, respond)
        made.append(daemon)
        return daemon

    try:
        yield make
    finally:
        for daemon in made:
            daemon.close()


def test_absent_socket_is_a_connection_error(sock: str) -> None:
    with pytest.raises(client.DaemonConnectionError) as caught:
        client.call(sock, "ping")
    assert str(caught.value) == (
        f"Cannot reach AgentMon daemon at {sock}: No such file or directory"
    )
    assert caught.value.timed_out is False
    assert caught.value.socket_path == sock
    assert client.ping(sock) is False


def test_refused_socket_is_a_connection_error(sock: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(sock)  # a socket file nobody listens on
        with pytest.raises(client.DaemonConnectionError, match="Connection refused"):
            client.call(sock, "ping")


def test_silent_listener_times_out(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    fake(None)
    started = time.monotonic()
    with pytest.raises(client.DaemonConnectionError) as caught:
        client.call(sock, "status", timeout_s=0.3)
    elapsed = time.monotonic() - started
    assert str(caught.value) == f"Timed out waiting for AgentMon daemon at {sock}"
    assert caught.value.timed_out is True
    assert 0.25 <= elapsed < 2
    started = time.monotonic()
    assert client.ping(sock) is False
    assert time.monotonic() - started < 1.5  # ping's own 500 ms budget


def test_request_line_shape(fake: Callable[[Responder | None], FakeDaemon], sock: str) -> None:
    daemon = fake(reply_with(lambda request: {"id": request["id"], "result": 1}))
    assert client.call(sock, "events.list", {"text": "ü ✓"}) == 1
    assert client.call(sock, "session.list") == 1
    first, second = daemon.lines
    assert b"\n" not in first
    assert "ü ✓".encode() in first  # non-ASCII is not escaped
    assert b", " not in first and b": " not in first
    decoded = json.loads(first)
    assert set(decoded) == {"id", "method", "params"}
    assert decoded["method"] == "events.list"
    assert json.loads(second)["params"] == {}
    assert decoded["id"] != json.loads(second)["id"]


def test_null_and_missing_result_are_none(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    fake(reply_with(lambda request: {"id": request["id"]}))
    assert client.call(sock, "x") is None


def test_unsupported_reply_is_its_own_error(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    fake(reply_with(dict(UNSUPPORTED_REPLY)))
    with pytest.raises(client.DaemonUnsupportedError) as caught:
        client.call(sock, "watch.declare", {})
    assert caught.value.message == "Invalid JSON request."


def test_legacy_unsupported_reply_without_code(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    fake(reply_with({"id": "invalid", "error": "Invalid JSON request."}))
    with pytest.raises(client.DaemonUnsupportedError):
        client.call(sock, "hook.reserve", {"sessionId": "s"})


def test_application_error_message_is_verbatim(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    message = "Session 01JABC not found.\n  (closed at 2026-01-01)"
    fake(reply_with(lambda request: {"id": request["id"], "error": message}))
    with pytest.raises(client.DaemonApplicationError) as caught:
        client.call(sock, "session.close", {"sessionId": "01JABC"})
    assert caught.value.message == message
    assert str(caught.value) == message
    assert isinstance(caught.value, client.DaemonError)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param(b'{"id":"x","res', "connection closed before a complete reply", id="eof"),
        pytest.param(b"", "connection closed before a complete reply", id="empty"),
        pytest.param(b"not json\n", "garbled reply", id="not-json"),
        pytest.param(b"[1]\n", "garbled reply", id="not-object"),
        pytest.param(b'{"id":"someone-else","result":1}\n', "another request", id="wrong-id"),
    ],
)
def test_broken_replies_are_connection_errors(
    fake: Callable[[Responder | None], FakeDaemon], sock: str, raw: bytes, reason: str
) -> None:
    def respond(_line: bytes, conn: socket.socket) -> None:
        conn.sendall(raw)

    fake(respond)
    with pytest.raises(client.DaemonConnectionError, match=reason) as caught:
        client.call(sock, "ping")
    assert str(caught.value).startswith(f"Cannot reach AgentMon daemon at {sock}: ")


def test_reply_split_across_packets(
    fake: Callable[[Responder | None], FakeDaemon], sock: str
) -> None:
    def respond(line: bytes, conn: socket.socket) -> None:
        body = json.dumps({"id": json.loads(line)["id"], "result": "é" * 100_000}).encode()
        for start in range(0, len(body), 7_001):
            conn.sendall(body[start : start + 7_001])
        conn.sendall(b"\n")

    fake(respond)
    assert client.call(sock, "big") == "é" * 100_000


def test_no_daemon_message_text() -> None:
    assert NO_DAEMON_MESSAGE == (
        "No daemon running for this workspace - start it with `agentmonitors daemon start` "
        "(or it starts automatically when a Claude Code session opens), then run "
        "`agentmonitors daemon status` to see its sessions and events."
    )


def test_a_silent_daemon_is_reported_busy_not_missing(
    fake: Callable[[Responder | None], FakeDaemon],
    sock: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A daemon that accepts and does not answer in time is there: telling the user
    to start it would send them the wrong way."""
    fake(None)  # accepts, then says nothing
    code = main(["events", "ack", "--session", "S1", "--socket", sock, "--event-ids", "e1"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"Timed out waiting for AgentMon daemon at {sock}: it did not answer" in err
    assert "No daemon running" not in err
    assert main(["daemon", "stop", "--socket", sock]) == 1
    err = capsys.readouterr().err
    assert "did not answer stop within 2 s" in err and "No daemon running" not in err


def test_an_unbounded_list_waits_longer_than_one_request(
    fake: Callable[[Responder | None], FakeDaemon],
    sock: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``events list --all`` is as large as the store: a daemon slower than the request
    timeout to build it still gets to answer; a bounded list does not wait that long."""
    slower_than_a_request = REQUEST_TIMEOUT_S + 0.5

    def respond(line: bytes, conn: socket.socket) -> None:
        time.sleep(slower_than_a_request)
        with contextlib.suppress(BrokenPipeError):  # a client that gave up has gone
            conn.sendall(json.dumps({"id": json.loads(line)["id"], "result": []}).encode() + b"\n")

    fake(respond)
    assert (
        main(["events", "list", "--session", "S1", "--socket", sock, "--all", "--format", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out) == []
    assert main(["events", "list", "--session", "S1", "--socket", sock, "--limit", "5"]) == 1
    assert "Timed out waiting for AgentMon daemon" in capsys.readouterr().err


def test_monitor_history_and_explain_say_a_silent_daemon_is_busy(
    fake: Callable[[Responder | None], FakeDaemon],
    sock: str,
    capsys: pytest.CaptureFixture[str],
    isolated_environment: Path,
) -> None:
    """They fall back to the stored state, saying why: a busy daemon is not a missing one."""
    fake(None)
    assert main(["monitor", "history", "--socket", sock]) == 1
    err = capsys.readouterr().err
    assert f"The daemon at {sock} did not answer in time" in err and "No daemon" not in err

    assert main(["init", "--enable-only"]) == 0
    folder = isolated_environment / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: file-fingerprint\n  globs: 'notes/*.md'\n---\nRead them.\n"
    )
    assert main(["daemon", "once"]) == 0
    capsys.readouterr()
    assert main(["monitor", "history", "--socket", sock, "--format", "text"]) == 0
    assert capsys.readouterr().err.startswith(BUSY_NOTICE)  # a notice: stderr
    assert main(["monitor", "explain", "notes", "--socket", sock, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notice"] == BUSY_NOTICE

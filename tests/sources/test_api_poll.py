"""api-poll against a real HTTP server on 127.0.0.1 whose answers the test changes."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import logging
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from agentmonitors.clock import ManualClock
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.api_poll import ApiPollSource
from agentmonitors.sources.api_poll.http_fetch import FetchError, fetch, open_client
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.permit import TRUSTED
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.store.database import Database

MIB = 1024 * 1024


@dataclass
class Reply:
    body: bytes | str = b""
    status: int = 200
    content_type: str | None = "text/plain"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    trickle: float = 0.0  # between body bytes
    length: bool = True  # send Content-Length (else close-delimited)


class Server:
    """A ThreadingHTTPServer whose replies are set per path; it records each request."""

    def __init__(self) -> None:
        self.replies: dict[str, Reply] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                path = self.path.split("?", 1)[0]
                server.requests.append((self.command, self.path, dict(self.headers.items())))
                reply = server.replies.get(path, Reply(b"not found", 404))
                if reply.delay and server.stop.wait(reply.delay):
                    return
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                if reply.content_type:
                    self.send_header("Content-Type", reply.content_type)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if not reply.trickle:
                    self.wfile.write(body)
                    return
                for byte in body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if server.stop.wait(reply.trickle):
                        return

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        class Quiet(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                del request, client_address  # a client that gave up is expected here

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


class Poller:
    """Observes one config repeatedly, carrying next_state like the runtime does."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.source = ApiPollSource()
        self.config = dict(config)
        self.state: Any = None

    def poll(self) -> ObservationResult:
        context = ObservationContext(self.state, 0, None, "m", permit=TRUSTED)
        result = asyncio.run(self.source.observe(self.config, context))
        if result.has_next_state:
            self.state = result.next_state
        return result

    def fails(self) -> str:
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the message is what counts
            self.poll()
        return str(caught.value)


# --- strategies -------------------------------------------------------------------


def test_text_diff_baseline_then_change(server: Server) -> None:
    server.replies["/t"] = Reply("one\n")
    poller = Poller({"url": server.url("/t")})
    first = poller.poll()
    assert first.observations == []
    assert first.next_state == {"body": "one\n", "status": 200}
    assert poller.poll().observations == []
    server.replies["/t"] = Reply("two\n")
    (observation,) = poller.poll().observations
    url = server.url("/t")
    assert observation.title == observation.summary == f"API response changed: {url}"
    assert observation.object_key == url
    assert observation.query_scope == {"url": url}
    assert observation.snapshot_text == "two\n"
    assert observation.payload == {
        "url": url,
        "status": 200,
        "strategy": "text-diff",
        "body": "two\n",
    }
    assert observation.snapshot == {
        "url": url,
        "status": 200,
        "bodyLength": 4,
        "strategy": "text-diff",
    }
    assert observation.change_kind is None


def test_json_inferred_from_content_type_ignores_key_order_and_whitespace(server: Server) -> None:
    server.replies["/j"] = Reply(
        '{"a": 1, "b": [1, 2]}', content_type="application/vnd.x+json; charset=utf-8"
    )
    poller = Poller({"url": server.url("/j")})
    poller.poll()
    server.replies["/j"] = Reply('{\n  "b": [1,2],\n  "a": 1.0\n}', content_type="application/json")
    result = poller.poll()
    assert result.observations == []
    assert result.warnings == []
    server.replies["/j"] = Reply('{"b": [2, 1], "a": 1}', content_type="application/json")
    (observation,) = poller.poll().observations
    assert observation.snapshot["strategy"] == "json-diff"


def test_text_inferred_when_content_type_is_not_json(server: Server) -> None:
    server.replies["/h"] = Reply('{"a": 1, "b": 2}', content_type=None)
    poller = Poller({"url": server.url("/h")})
    poller.poll()
    server.replies["/h"] = Reply('{"b": 2, "a": 1}', content_type="text/html")
    (observation,) = poller.poll().observations
    assert observation.payload["strategy"] == "text-diff"


def test_explicit_json_diff_on_html_warns_and_compares_text(server: Server) -> None:
    server.replies["/p"] = Reply("<p>hi</p>", content_type="text/html")
    poller = Poller(
        {
            "url": server.url("/p") + "?token=s3cr3t-value",
            "change-detection": {"strategy": "json-diff"},
        }
    )
    result = poller.poll()
    (warning,) = result.warnings
    assert warning.startswith(
        f"api-poll: change-detection.strategy is json-diff but the response from "
        f"{server.url('/p')} does not parse as JSON"
    )
    assert "s3cr3t" not in warning
    server.replies["/p"] = Reply("<p>ho</p>", content_type="text/html")
    (observation,) = poller.poll().observations
    assert observation.payload["strategy"] == "json-diff"
    assert observation.object_key == server.url("/p") + "?token=REDACTED"


def test_status_code_strategy_never_reads_the_body_and_accepts_errors(server: Server) -> None:
    server.replies["/s"] = Reply("x" * (11 * MIB), status=200)
    poller = Poller({"url": server.url("/s"), "change-detection": {"strategy": "status-code"}})
    assert poller.poll().next_state == {"body": "", "status": 200}
    server.replies["/s"] = Reply("other body", status=200)
    assert poller.poll().observations == []
    server.replies["/s"] = Reply("down", status=503)
    (observation,) = poller.poll().observations
    assert observation.payload == {
        "url": server.url("/s"),
        "status": 503,
        "strategy": "status-code",
        "body": "",
    }
    assert poller.poll().observations == []


def test_http_errors_are_raised_and_never_baselined(server: Server) -> None:
    server.replies["/e"] = Reply("boom", status=500)
    poller = Poller({"url": server.url("/e") + "?api_key=zzz-secret"})
    message = poller.fails()
    assert message == (
        f"api-poll received HTTP 500 from {server.url('/e')} — check auth/url; "
        "not establishing a baseline on an error response"
    )
    assert poller.state is None
    server.replies["/e"] = Reply("good")
    assert poller.poll().observations == []  # the first good answer is the baseline
    server.replies["/e"] = Reply("nope", status=404)
    poller.fails()
    assert poller.state == {"body": "good", "status": 200}
    server.replies["/e"] = Reply("better")
    assert len(poller.poll().observations) == 1


def test_method_and_headers_reach_the_server(server: Server) -> None:
    server.replies["/m"] = Reply("ok")
    poller = Poller(
        {
            "url": server.url("/m"),
            "method": "POST",
            "headers": {"X-Trace": "t1", "authorization": "Token explicit"},
            "auth": {"type": "bearer", "token": "ignored-token"},
        }
    )
    poller.poll()
    ((method, _path, headers),) = server.requests
    assert method == "POST"
    assert headers["X-Trace"] == "t1"
    assert headers["authorization"] == "Token explicit"


# --- auth ---------------------------------------------------------------------------


def test_bearer_token_from_env_is_read_at_request_time(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.replies["/a"] = Reply("ok")
    poller = Poller(
        {"url": server.url("/a"), "auth": {"type": "bearer", "token-env": "AM_TEST_TOKEN"}}
    )
    monkeypatch.delenv("AM_TEST_TOKEN", raising=False)
    message = poller.fails()
    assert message == (
        "Bearer auth requires a token. Set the AM_TEST_TOKEN environment variable or add "
        "auth.token to your monitor's watch block."
    )
    assert server.requests == []
    monkeypatch.setenv("AM_TEST_TOKEN", "tok-one")
    poller.poll()
    monkeypatch.setenv("AM_TEST_TOKEN", "tok-two")
    poller.poll()
    assert [headers["Authorization"] for _, _, headers in server.requests] == [
        "Bearer tok-one",
        "Bearer tok-two",
    ]


def test_basic_auth_reaches_the_server(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    server.replies["/b"] = Reply("ok")
    Poller(
        {"url": server.url("/b"), "auth": {"type": "basic", "username": "ann", "password": "pw"}}
    ).poll()
    monkeypatch.setenv("AM_TEST_PASSWORD", "from-env")
    Poller(
        {
            "url": server.url("/b"),
            "auth": {"type": "basic", "username": "bo", "token-env": "AM_TEST_PASSWORD"},
        }
    ).poll()
    sent = [headers["Authorization"] for _, _, headers in server.requests]
    assert sent == [
        "Basic " + base64.b64encode(b"ann:pw").decode(),
        "Basic " + base64.b64encode(b"bo:from-env").decode(),
    ]
    monkeypatch.delenv("AM_TEST_PASSWORD")
    message = Poller(
        {
            "url": server.url("/b"),
            "auth": {"type": "basic", "username": "bo", "token-env": "AM_TEST_PASSWORD"},
        }
    ).fails()
    assert "AM_TEST_PASSWORD" in message


# --- deadlines and caps -----------------------------------------------------------


@pytest.mark.slow
def test_a_server_that_answers_too_late_times_out(server: Server) -> None:
    server.replies["/slow"] = Reply("late", delay=2.5)
    poller = Poller({"url": server.url("/slow") + "?secret=x1", "timeout": "1s"})
    started = time.monotonic()
    message = poller.fails()
    assert time.monotonic() - started < 2.0
    assert message == f"api-poll request to {server.url('/slow')} timed out after 1000ms"
    assert poller.state is None


@pytest.mark.slow
def test_a_body_trickled_past_the_deadline_times_out(server: Server) -> None:
    # Headers arrive at once; the body takes ~2.4 s; the one deadline covers both.
    server.replies["/trickle"] = Reply("abcdefghijkl", trickle=0.2)
    poller = Poller({"url": server.url("/trickle"), "timeout": "1s"})
    started = time.monotonic()
    message = poller.fails()
    assert time.monotonic() - started < 2.0
    assert message == f"api-poll request to {server.url('/trickle')} timed out after 1000ms"


def test_declared_content_length_over_the_cap_is_refused(server: Server) -> None:
    server.replies["/big"] = Reply("x" * (10 * MIB + 1))
    message = Poller({"url": server.url("/big")}).fails()
    assert message == (
        f"api-poll response from {server.url('/big')} declares Content-Length 10485761 bytes, "
        "exceeding the 10485760-byte cap"
    )


def test_streamed_bytes_are_the_authority(server: Server) -> None:
    # No Content-Length at all: the body runs until the connection closes.
    server.replies["/stream"] = Reply("y" * (10 * MIB + 5), length=False)
    message = Poller({"url": server.url("/stream")}).fails()
    assert message.startswith(f"api-poll response from {server.url('/stream')} streamed ")
    assert message.endswith("bytes, exceeding the 10485760-byte cap")
    # A Content-Length that understates the body (a gzip bomb: 11 MiB in a few KiB).
    bomb = gzip.compress(b"z" * (11 * MIB))
    server.replies["/bomb"] = Reply(bomb, headers={"Content-Encoding": "gzip"})
    message = Poller({"url": server.url("/bomb")}).fails()
    assert "streamed" in message
    assert "exceeding the 10485760-byte cap" in message
    # Exactly at the cap is fine.
    server.replies["/edge"] = Reply("e" * (10 * MIB))
    assert Poller({"url": server.url("/edge")}).poll().next_state["body"] == "e" * (10 * MIB)


def test_transport_errors_have_clear_redacted_messages() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    message = Poller({"url": f"http://user:pa55word@127.0.0.1:{port}/x?token=t0k"}).fails()
    assert message.startswith(f"api-poll request to http://127.0.0.1:{port}/x failed: ")
    assert "refused" in message.lower()
    assert "pa55word" not in message
    assert "t0k" not in message
    dns = Poller({"url": "http://no-such-host.invalid/x"}).fails()
    assert dns.startswith("api-poll request to http://no-such-host.invalid/x failed: ")
    # validate rejects it first; a daemon still running an older definition is told why.
    scheme = Poller({"url": "ftp://example.test/x"}).fails()
    assert scheme.startswith("Invalid api-poll config: watch.url: must be an http:// or https://")


def test_fetch_deadline_is_one_budget_for_every_phase(server: Server) -> None:
    server.replies["/t"] = Reply("abcdef", trickle=0.1)

    async def go() -> str:
        async with open_client(300) as client:
            with pytest.raises(FetchError) as caught:
                await fetch(client, server.url("/t"), timeout_ms=300, permit=TRUSTED)
            return str(caught.value)

    assert asyncio.run(go()).endswith("timed out after 300ms")


# --- keyed collections --------------------------------------------------------------


def test_collection_items_are_reported_one_by_one(server: Server) -> None:
    def tasks(*items: dict[str, Any]) -> Reply:
        return Reply(
            json.dumps({"at": time.time(), "tasks": list(items)}), content_type="application/json"
        )

    server.replies["/tasks"] = tasks({"id": 1, "s": "open"}, {"id": 2, "s": "open"})
    url = server.url("/tasks") + "?page=1&token=abc-secret"
    identity = server.url("/tasks") + "?page=1&token=REDACTED"
    poller = Poller(
        {
            "url": url,
            "change-detection": {
                "strategy": "json-diff",
                "collection": {"path": "$.tasks", "key": "id", "ignore-paths": ["seenAt"]},
            },
        }
    )
    first = poller.poll()
    assert first.observations == []
    assert set(first.next_state["keyedSnapshot"]) == {"1", "2"}
    server.replies["/tasks"] = tasks({"id": 2, "s": "open", "seenAt": 5}, {"id": 1, "s": "open"})
    assert poller.poll().observations == []
    server.replies["/tasks"] = tasks({"id": 3, "s": "new"}, {"id": 1, "s": "done"})
    observations = poller.poll().observations
    assert [(o.change_kind, o.object_key) for o in observations] == [
        ("created", f"{identity}#3"),
        ("modified", f"{identity}#1"),
        ("descoped", f"{identity}#2"),
    ]
    assert observations[0].title == f"Item added: {server.url('/tasks')}#3"
    assert observations[1].payload == {"url": identity, "key": "1", "changeKind": "modified"}
    assert observations[2].query_scope == {"url": identity, "objectKey": f"{identity}#2"}
    assert all("abc-secret" not in repr(o) for o in observations)


def test_collection_needs_json_and_an_array(server: Server) -> None:
    config = {
        "url": server.url("/c"),
        "change-detection": {"strategy": "json-diff", "collection": {"path": "items", "key": "id"}},
    }
    server.replies["/c"] = Reply("<html>", content_type="text/html")
    assert (
        Poller(config).fails().startswith(f"api-poll response from {server.url('/c')} is not JSON")
    )
    server.replies["/c"] = Reply('{"items": {}}', content_type="application/json")
    assert Poller(config).fails() == 'collection path "items" must select an array (got object)'


# --- composite ----------------------------------------------------------------------


def composite_config(server: Server, *parts: str, **extra: Any) -> dict[str, Any]:
    return {
        "change-detection": {
            "composite": {
                "object-key": "board",
                **extra,
                "parts": [{"id": part, "url": server.url(f"/{part}")} for part in parts],
            }
        }
    }


def test_composite_renders_parts_by_id_and_reports_one_change(server: Server) -> None:
    server.replies["/b"] = Reply("bee")
    server.replies["/a"] = Reply("ay")
    poller = Poller(composite_config(server, "b", "a"))
    assert poller.poll().observations == []
    assert poller.state == {"composite": "## a\nay\n\n## b\nbee"}
    assert poller.poll().observations == []
    server.replies["/a"] = Reply("ay2")
    (observation,) = poller.poll().observations
    assert observation.title == observation.summary == "Composite snapshot: board"
    assert observation.object_key == "board"
    assert observation.snapshot_text == "## a\nay2\n\n## b\nbee"
    assert observation.payload == {"objectKey": "board", "parts": [{"id": "a"}, {"id": "b"}]}
    assert observation.snapshot == {"objectKey": "board", "partCount": 2}
    assert observation.query_scope == {"objectKey": "board"}
    server.replies["/b"] = Reply("bee2")
    titled = Poller(composite_config(server, "a", "b", title="Board moved"))
    titled.state = poller.state
    (observation,) = titled.poll().observations
    assert observation.title == "Board moved"


def test_composite_fails_whole_when_a_part_fails(server: Server) -> None:
    server.replies["/a"] = Reply("ay")
    server.replies["/b"] = Reply("bee")
    poller = Poller(composite_config(server, "a", "b"))
    poller.poll()
    server.replies["/b"] = Reply("no", status=401)
    message = poller.fails()
    assert message == (
        f'api-poll received HTTP 401 from composite part "b" ({server.url("/b")}) — check '
        "auth/url; not establishing a baseline on an error response"
    )
    assert poller.state == {"composite": "## a\nay\n\n## b\nbee"}


@pytest.mark.slow
def test_composite_failure_cancels_parts_still_in_flight(server: Server) -> None:
    server.replies["/a"] = Reply("never", delay=2.5)
    server.replies["/b"] = Reply("no", status=500)
    poller = Poller({**composite_config(server, "a", "b"), "timeout": "5s"})
    started = time.monotonic()
    assert "HTTP 500" in poller.fails()
    assert time.monotonic() - started < 1.5


def test_the_trust_store_is_loaded_once_not_on_every_poll(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each client once made its own TLS context, reading the CA bundle (~20 ms of CPU)
    on every poll of every monitor, whatever its scheme."""
    loads: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    server.replies["/t"] = Reply("one\n")
    poller = Poller({"url": server.url("/t")})
    for _ in range(3):
        poller.poll()
    assert len(loads) <= 1


def test_invalid_config_is_reported() -> None:
    message = Poller({"url": 3}).fails()
    assert message.startswith("Invalid api-poll config:")


# --- secrets through a real tick ------------------------------------------------------


def test_tokens_never_reach_the_database_or_the_logs(
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = "tok-9f8e7d6c5b4a-SECRET"
    query_secret = "q-77aa88bb99cc-SECRET"
    monkeypatch.setenv("AM_TICK_TOKEN", token)
    workspace = tmp_path / "ws"
    folder = workspace / ".claude" / "monitors" / "api"
    folder.mkdir(parents=True)
    url = server.url("/data") + f"?page=1&access_token={query_secret}"
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: api-poll\n"
        f"  url: '{url}'\n"
        "  interval: 1m\n"
        "  auth:\n    type: bearer\n    token-env: AM_TICK_TOKEN\n"
        "---\nLook.\n"
    )
    # A project monitor that fetches a URL runs once the user approved it.
    assert main(["monitor", "approve", "--yes", "api", "--workspace", str(workspace)]) == 0
    db_path = tmp_path / "data" / "inbox.db"
    db = Database(str(db_path))
    clock = ManualClock(1_780_000_000_000)
    runtime = Runtime(db, str(workspace), bundled_registry(), clock=clock)
    caplog.set_level(logging.DEBUG)
    try:
        for reply in (Reply("v1"), Reply("v2"), Reply("bad", status=500), Reply("v3")):
            server.replies["/data"] = reply
            result = asyncio.run(runtime.tick(("api",)))
            clock.advance(120_000)
        assert result.emitted_event_ids  # the change after the error was reported
        with db.read() as conn:
            tables = [
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            dump = json.dumps(
                {
                    table: [list(row) for row in conn.execute(f'SELECT * FROM "{table}"')]
                    for table in tables
                },
                default=str,
            )
        assert "HTTP 500" in dump
    finally:
        db.close()
    assert all(
        headers.get("Authorization") == f"Bearer {token}" for _, _, headers in server.requests
    )
    raw = b"".join(path.read_bytes() for path in db_path.parent.iterdir() if path.is_file())
    for secret in (token, query_secret):
        assert secret not in dump
        assert secret.encode() not in raw
        assert secret not in caplog.text

"""What every fake model API of the offline real-client tests shares.

A fake API is an HTTP server on 127.0.0.1 that keeps every request it receives (in memory
and as one JSON line each in a log file), answers the host's model requests with a short
reply or a scripted tool call, and anything else with ``200 {}``. The Anthropic Messages
API (Claude Code, ``fake_messages_api.py``) and the OpenAI Responses API (Codex,
``fake_responses_api.py``) differ only in how a request is answered and how the newest
prompt is found; this module holds the rest.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar
from urllib.parse import urlsplit


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the fake API received it."""

    index: int
    time: float
    method: str
    path: str
    raw: str
    body: Any = field(default=None)

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    @property
    def is_message(self) -> bool:
        """An Anthropic Messages request (what Claude Code asks the model)."""
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def is_response(self) -> bool:
        """An OpenAI Responses request (what Codex asks the model)."""
        return self.method == "POST" and self.route.endswith("/responses")

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "time": self.time,
            "method": self.method,
            "path": self.path,
            "body": self.body if self.body is not None else self.raw,
        }


class Scripted(Protocol):
    """A scripted tool call: sent once a prompt holding ``trigger`` arrives."""

    @property
    def trigger(self) -> str: ...


CallT = TypeVar("CallT", bound=Scripted)


def _zstd_decompress(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
    except ImportError:
        return data  # logged as received; a test that needs the body will say so
    result: bytes = zstd.decompress(data)
    return result


class RecordingHandler(BaseHTTPRequestHandler):
    """Records each request, then lets :meth:`answer` reply to it."""

    protocol_version = "HTTP/1.1"
    server: RecordingServer
    # Sent with every answer (Claude Code reads a request id from its API).
    extra_headers: ClassVar[dict[str, str]] = {}

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the JSON-lines log is the record; keep pytest's output clean

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length > 0 else b""
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            data = gzip.decompress(data)
        elif encoding == "deflate":
            data = zlib.decompress(data)
        elif encoding == "zstd":
            data = _zstd_decompress(data)
        return data

    def send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def answer(self, request: LoggedRequest, body: Any) -> None:
        raise NotImplementedError

    def _handle(self) -> None:
        raw = self._read_body().decode("utf-8", errors="replace")
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        self.answer(self.server.api.record(self.command, self.path, raw, body), body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class RecordingServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, api: RecordingApi[Any], handler: type[RecordingHandler]) -> None:
        self.api = api
        super().__init__(("127.0.0.1", 0), handler)


class RecordingApi(Generic[CallT]):
    """Start with ``with Api(log_path) as api:``; ``api.base_url`` is the URL.

    A subclass names its handler, its thread and what follows the host and port in
    ``base_url``, and says how to find the newest prompt of a request body.
    """

    handler: ClassVar[type[RecordingHandler]]
    thread_name: ClassVar[str] = "fake-api"
    url_suffix: ClassVar[str] = ""

    def __init__(self, log_path: Path, reply_text: str = "ok") -> None:
        self.log_path = log_path
        self.reply_text = reply_text
        self._lock = threading.Lock()
        self._requests: list[LoggedRequest] = []
        self._tool_calls: list[CallT] = []
        self._server: RecordingServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        self._server = RecordingServer(self, self.handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the fake API is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.url_suffix}"

    # ------------------------------------------------------------------ scripted tool calls

    def prompt_of(self, body: Any) -> str | None:
        """The newest prompt's text in a model request, or None when it carries none."""
        raise NotImplementedError

    def script_tool_call(self, call: CallT) -> None:
        """Answer the next request whose newest prompt holds ``call.trigger`` with ``call``."""
        with self._lock:
            self._tool_calls.append(call)

    def take_tool_call(self, body: Any) -> CallT | None:
        prompt = self.prompt_of(body)
        if prompt is None:
            return None
        with self._lock:
            for index, call in enumerate(self._tool_calls):
                if call.trigger in prompt:
                    return self._tool_calls.pop(index)
        return None

    # ------------------------------------------------------------------ the record

    def record(self, method: str, path: str, raw: str, body: Any) -> LoggedRequest:
        with self._lock:
            request = LoggedRequest(len(self._requests), time.time(), method, path, raw, body)
            self._requests.append(request)
            with self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(request.to_json(), ensure_ascii=False) + "\n")
        return request

    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._requests)

    def mark(self) -> int:
        """The index the next request will get: pass it to the model-request listing."""
        with self._lock:
            return len(self._requests)

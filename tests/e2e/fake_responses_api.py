"""A fake OpenAI Responses API on 127.0.0.1 for driving the Codex CLI offline.

Codex (0.169.x) speaks only the Responses wire format to a custom model provider: it
posts ``stream: true`` bodies to ``<base_url>/responses`` and reads an SSE stream of
``response.created``, ``response.output_item.done`` and ``response.completed`` events.
Every such request is answered with one assistant message (``ok``); a test may script a
tool call (``script_tool_call``): the request whose newest user text holds a trigger gets
a ``function_call`` item instead, so Codex runs a real command (and its PostToolUse
hooks), and the request carrying the call's output gets ``ok`` again. ``GET .../models``
answers an empty catalogue and any other path ``200 {}``. Every request is kept in memory
and appended to a JSON-lines log so a test can search what Codex sent.
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
from typing import Any
from urllib.parse import urlsplit

MODEL = "gpt-fake-model"


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
    def is_response(self) -> bool:
        return self.method == "POST" and urlsplit(self.path).path.endswith("/responses")

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "time": self.time,
            "method": self.method,
            "path": self.path,
            "body": self.body if self.body is not None else self.raw,
        }


@dataclass(frozen=True)
class ToolCall:
    """A ``function_call`` to answer with once a user text holding ``trigger`` arrives."""

    trigger: str
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None  # None: one id per answer, so no two calls share one


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(part.get("text", "")) for part in content if isinstance(part, dict)]


def latest_user_text(body: Any) -> str | None:
    """The newest user message's text, unless a tool's output came after it.

    Codex puts hook context in ``developer`` messages after the prompt, so those are
    passed over; a ``function_call_output`` after the prompt means this request carries
    a tool's result, not a new prompt.
    """
    if not isinstance(body, dict):
        return None
    items = body.get("input")
    if not isinstance(items, list):
        return None
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            return None
        if item.get("role") == "user":
            return "\n".join(_texts(item))
    return None


def sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


def response_stream(response_id: str, item: dict[str, Any]) -> bytes:
    """The three events of one response holding a single output item."""
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return b"".join(
        [
            sse({"type": "response.created", "response": {"id": response_id}}),
            sse({"type": "response.output_item.done", "output_index": 0, "item": item}),
            sse(
                {
                    "type": "response.completed",
                    "response": {"id": response_id, "model": MODEL, "usage": usage},
                }
            ),
        ]
    )


def message_item(message_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": message_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(call: ToolCall, index: int) -> dict[str, Any]:
    call_id = call.call_id or f"call_fake_{index:04d}"
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": call.name,
        "arguments": json.dumps(call.arguments),
        "status": "completed",
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

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

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def _handle(self) -> None:
        raw = self._read_body().decode("utf-8", errors="replace")
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        api = self.server.api
        request = api.record(self.command, self.path, raw, body)
        route = urlsplit(self.path).path
        if request.is_response:
            response_id = f"resp_fake_{request.index:04d}"
            call = api.take_tool_call(body)
            item = (
                function_call_item(call, request.index)
                if call is not None
                else message_item(f"msg_fake_{request.index:04d}", api.reply_text)
            )
            self._send(200, "text/event-stream", response_stream(response_id, item))
        elif self.command == "GET" and route.endswith("/models"):
            self._send(200, "application/json", b'{"models": []}')
        else:
            self._send(200, "application/json", b"{}")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


def _zstd_decompress(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
    except ImportError:
        return data  # logged as received; a test that needs the body will say so
    result: bytes = zstd.decompress(data)
    return result


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, api: FakeResponsesApi) -> None:
        self.api = api
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeResponsesApi:
    """Start with ``with FakeResponsesApi(log_path) as api:``; ``api.base_url`` is the URL."""

    def __init__(self, log_path: Path, reply_text: str = "ok") -> None:
        self.log_path = log_path
        self.reply_text = reply_text
        self._lock = threading.Lock()
        self._requests: list[LoggedRequest] = []
        self._tool_calls: list[ToolCall] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeResponsesApi:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-responses-api", daemon=True
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

    def __enter__(self) -> FakeResponsesApi:
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
        """What a Codex model provider's ``base_url`` is set to (with the ``/v1``)."""
        assert self._server is not None, "the fake API is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script_tool_call(self, call: ToolCall) -> None:
        """Answer the next request whose newest user text holds ``call.trigger`` with it."""
        with self._lock:
            self._tool_calls.append(call)

    def take_tool_call(self, body: Any) -> ToolCall | None:
        text = latest_user_text(body)
        if text is None:
            return None
        with self._lock:
            for index, call in enumerate(self._tool_calls):
                if call.trigger in text:
                    return self._tool_calls.pop(index)
        return None

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

    def response_requests(self, since: int = 0) -> list[LoggedRequest]:
        """``POST .../responses`` requests whose index is ``since`` or later."""
        return [r for r in self.requests if r.is_response and r.index >= since]

    def mark(self) -> int:
        """The index the next request will get: pass it to ``response_requests``."""
        with self._lock:
            return len(self._requests)

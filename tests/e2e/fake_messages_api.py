"""A fake Anthropic Messages API on 127.0.0.1 for driving Claude Code offline (spec 08 §2).

Every ``POST /v1/messages`` is answered with a short text (``ok``) and ``end_turn``: as an
SSE stream when the request asks for ``stream: true`` (Claude Code always does), as one
JSON message otherwise. A test may script a tool call (``script_tool_call``): the request
whose newest user prompt holds a trigger text gets that ``tool_use`` instead, so Claude
Code runs a real tool (and its PostToolUse hooks); the request carrying the tool's result
gets ``ok`` again. ``/v1/messages/count_tokens`` answers ``{"input_tokens": 1}`` and any
other path ``200 {}``. Every request is kept in memory and appended to a JSON-lines log so
a test can search what Claude Code sent.
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

MODEL = "claude-fake-model"


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
    def is_message(self) -> bool:
        route = urlsplit(self.path).path
        return self.method == "POST" and route == "/v1/messages"

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "time": self.time,
            "method": self.method,
            "path": self.path,
            "body": self.body if self.body is not None else self.raw,
        }


def sse_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


@dataclass(frozen=True)
class ToolCall:
    """A ``tool_use`` block to answer with once a prompt holding ``trigger`` arrives."""

    trigger: str
    name: str
    input: dict[str, Any]
    # None: one id per answer. Claude Code mangles a history holding two tool calls with
    # one id (the earlier turn becomes "[Tool use interrupted]").
    id: str | None = None


def latest_prompt_text(body: Any) -> str | None:
    """The text of the newest user message when it is a prompt (not a tool result)."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        return None
    content = last.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    blocks = [block for block in content if isinstance(block, dict)]
    if any(block.get("type") == "tool_result" for block in blocks):
        return None
    return "\n".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")


def _one_block_stream(
    message_id: str, block: dict[str, Any], delta: dict[str, Any], stop_reason: str
) -> bytes:
    """The six SSE events of one assistant message with a single content block."""
    start = {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    return b"".join(
        [
            sse_event("message_start", start),
            sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            sse_event(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": delta},
            ),
            sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse_event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            sse_event("message_stop", {"type": "message_stop"}),
        ]
    )


def _one_block_json(message_id: str, block: dict[str, Any], stop_reason: str) -> bytes:
    return json.dumps(
        {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    ).encode()


def _tool_use_id(message_id: str, call: ToolCall) -> str:
    return call.id or message_id.replace("msg_", "toolu_", 1)


def tool_use_stream(message_id: str, call: ToolCall) -> bytes:
    """One assistant message that asks for ``call`` and stops for its result."""
    block = {
        "type": "tool_use",
        "id": _tool_use_id(message_id, call),
        "name": call.name,
        "input": {},
    }
    delta = {"type": "input_json_delta", "partial_json": json.dumps(call.input)}
    return _one_block_stream(message_id, block, delta, "tool_use")


def tool_use_json(message_id: str, call: ToolCall) -> bytes:
    block = {
        "type": "tool_use",
        "id": _tool_use_id(message_id, call),
        "name": call.name,
        "input": call.input,
    }
    return _one_block_json(message_id, block, "tool_use")


def message_stream(message_id: str, text: str) -> bytes:
    """The six SSE events of one assistant message holding ``text``."""
    block = {"type": "text", "text": ""}
    return _one_block_stream(message_id, block, {"type": "text_delta", "text": text}, "end_turn")


def message_json(message_id: str, text: str) -> bytes:
    return _one_block_json(message_id, {"type": "text", "text": text}, "end_turn")


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
        return data

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", "req_fake")
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
        request = self.server.api.record(self.command, self.path, raw, body)
        route = urlsplit(self.path).path
        if self.command == "POST" and route == "/v1/messages/count_tokens":
            self._send(200, "application/json", b'{"input_tokens": 1}')
        elif request.is_message:
            message_id = f"msg_fake_{request.index:04d}"
            text = self.server.api.reply_text
            call = self.server.api.take_tool_call(body)
            streaming = isinstance(body, dict) and bool(body.get("stream"))
            if call is not None:
                payload = (
                    tool_use_stream(message_id, call)
                    if streaming
                    else tool_use_json(message_id, call)
                )
                self._send(200, "text/event-stream" if streaming else "application/json", payload)
            elif streaming:
                self._send(200, "text/event-stream", message_stream(message_id, text))
            else:
                self._send(200, "application/json", message_json(message_id, text))
        else:
            self._send(200, "application/json", b"{}")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, api: FakeMessagesApi) -> None:
        self.api = api
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeMessagesApi:
    """Start with ``with FakeMessagesApi(log_path) as api:``; ``api.base_url`` is the URL."""

    def __init__(self, log_path: Path, reply_text: str = "ok") -> None:
        self.log_path = log_path
        self.reply_text = reply_text
        self._lock = threading.Lock()
        self._requests: list[LoggedRequest] = []
        self._tool_calls: list[ToolCall] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeMessagesApi:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-messages-api", daemon=True
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

    def __enter__(self) -> FakeMessagesApi:
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
        return f"http://{host!s}:{port}"

    # ------------------------------------------------------------------ scripted tool calls

    def script_tool_call(self, call: ToolCall) -> None:
        """Answer the next request whose newest prompt holds ``call.trigger`` with ``call``."""
        with self._lock:
            self._tool_calls.append(call)

    def take_tool_call(self, body: Any) -> ToolCall | None:
        prompt = latest_prompt_text(body)
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

    def messages_requests(self, since: int = 0) -> list[LoggedRequest]:
        """``POST /v1/messages`` requests whose index is ``since`` or later."""
        return [r for r in self.requests if r.is_message and r.index >= since]

    def mark(self) -> int:
        """The index the next request will get: pass it to ``messages_requests``."""
        with self._lock:
            return len(self._requests)

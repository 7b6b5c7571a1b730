"""A fake Anthropic Messages API on 127.0.0.1 for driving Claude Code offline.

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

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from tests.e2e.fake_api import LoggedRequest, RecordingApi, RecordingHandler

__all__ = ["FakeMessagesApi", "LoggedRequest", "ToolCall"]

MODEL = "claude-fake-model"


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


class _Handler(RecordingHandler):
    extra_headers: ClassVar[dict[str, str]] = {"request-id": "req_fake"}

    def answer(self, request: LoggedRequest, body: Any) -> None:
        api = self.server.api
        if self.command == "POST" and request.route == "/v1/messages/count_tokens":
            self.send(200, "application/json", b'{"input_tokens": 1}')
        elif request.is_message:
            message_id = f"msg_fake_{request.index:04d}"
            text = api.reply_text
            call = api.take_tool_call(body)
            streaming = isinstance(body, dict) and bool(body.get("stream"))
            if call is not None:
                payload = (
                    tool_use_stream(message_id, call)
                    if streaming
                    else tool_use_json(message_id, call)
                )
                self.send(200, "text/event-stream" if streaming else "application/json", payload)
            elif streaming:
                self.send(200, "text/event-stream", message_stream(message_id, text))
            else:
                self.send(200, "application/json", message_json(message_id, text))
        else:
            self.send(200, "application/json", b"{}")


class FakeMessagesApi(RecordingApi[ToolCall]):
    """Start with ``with FakeMessagesApi(log_path) as api:``; ``api.base_url`` is the URL."""

    handler = _Handler
    thread_name = "fake-messages-api"

    def prompt_of(self, body: Any) -> str | None:
        return latest_prompt_text(body)

    def messages_requests(self, since: int = 0) -> list[LoggedRequest]:
        """``POST /v1/messages`` requests whose index is ``since`` or later."""
        return [r for r in self.requests if r.is_message and r.index >= since]

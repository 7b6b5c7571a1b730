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

import json
from dataclasses import dataclass
from typing import Any

from tests.e2e.fake_api import LoggedRequest, RecordingApi, RecordingHandler

__all__ = ["FakeResponsesApi", "LoggedRequest", "ToolCall"]

MODEL = "gpt-fake-model"


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


class _Handler(RecordingHandler):
    def answer(self, request: LoggedRequest, body: Any) -> None:
        api = self.server.api
        if request.is_response:
            response_id = f"resp_fake_{request.index:04d}"
            call = api.take_tool_call(body)
            item = (
                function_call_item(call, request.index)
                if call is not None
                else message_item(f"msg_fake_{request.index:04d}", api.reply_text)
            )
            self.send(200, "text/event-stream", response_stream(response_id, item))
        elif self.command == "GET" and request.route.endswith("/models"):
            self.send(200, "application/json", b'{"models": []}')
        else:
            self.send(200, "application/json", b"{}")


class FakeResponsesApi(RecordingApi[ToolCall]):
    """Start with ``with FakeResponsesApi(log_path) as api:``; ``api.base_url`` is what a
    Codex model provider's ``base_url`` is set to (with the ``/v1``)."""

    handler = _Handler
    thread_name = "fake-responses-api"
    url_suffix = "/v1"

    def prompt_of(self, body: Any) -> str | None:
        return latest_user_text(body)

    def response_requests(self, since: int = 0) -> list[LoggedRequest]:
        """``POST .../responses`` requests whose index is ``since`` or later."""
        return [r for r in self.requests if r.is_response and r.index >= since]

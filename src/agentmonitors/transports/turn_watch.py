"""Whether a Claude Code session is mid-turn, read from its transcript.

``hook rewake`` (``transports/rewake.py``) must claim only while the session is idle:
while a turn runs, the hooks deliver at its next prompt, tool call or stop, and a wake
would only queue the change behind the turn. Nothing in the Stop input says when the
next turn starts, but Claude Code appends to the session's transcript (the payload's
``transcript_path``, one JSON object a line) as a turn runs and leaves it alone while the
session waits. Measured with 2.1.332: after a turn's last answer come only bookkeeping
entries (``last-prompt``, ``atis-latch``, attachments such as ``prompt_snapshot`` and
``hook_success``, the ``system`` ``stop_hook_summary``); a new prompt adds
``queue-operation`` then ``user``; a Stop hook's context that continues the turn adds a
``hook_additional_context`` attachment then an ``api-request``; a tool call is an
``assistant`` entry holding a ``tool_use`` block, and its result a ``user`` entry.

Standard library only; ``json`` is loaded on the first read (only a waiting hook reads).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAIL_BYTES = 256 * 1024
"""How much of the transcript's end is read to see where the session stands."""
TURN_ENTRIES = ("user", "assistant", "queue-operation", "api-request")
"""Entry types written only while a turn runs (or one is queued)."""
CONTINUING = "hook_additional_context"
"""An attachment that carries a hook's context into the model: the turn goes on."""


def _entries(chunk: bytes) -> list[dict[str, Any]]:
    # Lazy: json (with re) loads only in a hook that waits, never at a Stop that stays out.
    import json

    found: list[dict[str, Any]] = []
    for line in chunk.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            found.append(entry)
    return found


def _runs(entry: dict[str, Any]) -> bool:
    """Whether this entry, written after a turn's last answer, means a turn runs."""
    kind = entry.get("type")
    if kind == "attachment":
        attachment = entry.get("attachment")
        return isinstance(attachment, dict) and attachment.get("type") == CONTINUING
    return kind in TURN_ENTRIES


def _calls_a_tool(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in content
    )


class TurnWatch:
    """Reads a transcript from where it stood when the hook started."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.offset = 0
        self.busy = False
        if not path:
            return
        try:
            with open(path, "rb") as handle:
                end = handle.seek(0, os.SEEK_END)
                start = max(0, end - TAIL_BYTES)
                handle.seek(start)
                tail = handle.read(end - start)
        except OSError:
            self.path = None  # unreadable: the other checks end the wait
            return
        complete = tail.rfind(b"\n") + 1
        self.offset = start + complete
        lines = tail[:complete]
        if start:
            lines = lines[lines.find(b"\n") + 1 :]  # the first line was cut
        self.busy = _running(_entries(lines))

    def turn_started(self) -> bool:
        """Whether a turn runs now: already when the hook started, or since."""
        if self.busy or self.path is None:
            return self.busy
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except OSError:
            return False
        complete = chunk.rfind(b"\n") + 1
        if complete:
            self.offset += complete
            self.busy = any(_runs(entry) for entry in _entries(chunk[:complete]))
        return self.busy


def _running(entries: list[dict[str, Any]]) -> bool:
    """Whether the transcript's end shows a turn running: after its last answer, an entry
    only a running turn writes, or that answer calls a tool."""
    last = max(
        (index for index, entry in enumerate(entries) if entry.get("type") == "assistant"),
        default=None,
    )
    if last is None:
        return False
    return _calls_a_tool(entries[last]) or any(_runs(entry) for entry in entries[last + 1 :])

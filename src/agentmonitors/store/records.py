"""Rows of the store and the camelCase JSON shapes they print as.

Database timestamps are epoch seconds (docs/compatibility.md, "Stored state"); the runtime
works in milliseconds and converts at this boundary.
"""

from __future__ import annotations

import json
import sqlite3
from collections import OrderedDict
from typing import Any

from agentmonitors.clock import iso_from_ms
from agentmonitors.fastpath.lean_dataclass import dataclass


def to_seconds(ms: int) -> int:
    return ms // 1000


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | None, default: Any) -> Any:
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def iso_from_seconds(seconds: int | None) -> str | None:
    return None if seconds is None else iso_from_ms(int(seconds) * 1000)


# ``MonitorStateRow.source_state`` when the row was read without it.
NOT_READ: Any = type("NotRead", (), {"__repr__": lambda self: "NOT_READ"})()


@dataclass(frozen=True)
class MonitorStateRow:
    last_observation_at_ms: int | None
    source_state: Any  # NOT_READ when loaded without it (queries.load_monitor_state)
    notify_state: dict[str, Any]
    updated_at_ms: int
    state_token: str | None = None


@dataclass(frozen=True)
class HistoryRow:
    id: str
    monitor_id: str
    workspace_path: str | None
    source_name: str
    observation_data: dict[str, Any]
    result: str
    created_at: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> HistoryRow:
        data = loads(row["observation_data"], {})
        return cls(
            id=row["id"],
            monitor_id=row["monitor_id"],
            workspace_path=row["workspace_path"],
            source_name=row["source_name"],
            observation_data=data if isinstance(data, dict) else {},
            result=row["result"],
            created_at=row["created_at"],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "monitorId": self.monitor_id,
            "workspacePath": self.workspace_path,
            "sourceName": self.source_name,
            "observationData": self.observation_data,
            "result": self.result,
            "createdAt": iso_from_seconds(self.created_at),
        }


@dataclass(frozen=True)
class EventRow:
    id: str
    workspace_path: str | None
    monitor_id: str
    source_name: str
    urgency: str
    title: str
    body: str
    summary: str
    payload: Any
    snapshot_metadata: Any
    snapshot_text: str | None
    diff_text: str | None
    object_key: str | None
    baseline_strategy: str | None
    query_scope: dict[str, Any]
    tags: list[str]
    created_at: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> EventRow:
        return cls(
            id=row["id"],
            workspace_path=row["workspace_path"],
            monitor_id=row["monitor_id"],
            source_name=row["source_name"],
            urgency=row["urgency"],
            title=row["title"],
            body=row["body"],
            summary=row["summary"],
            payload=loads(row["payload"], {}),
            snapshot_metadata=loads(row["snapshot_metadata"], {}),
            snapshot_text=row["snapshot_text"],
            diff_text=row["diff_text"],
            object_key=row["object_key"],
            baseline_strategy=row["baseline_strategy"],
            query_scope=loads(row["query_scope"], {}),
            tags=loads(row["tags"], []),
            created_at=row["created_at"],
        )

    @staticmethod
    def cached(event_id: str) -> EventRow | None:
        return _EVENT_CACHE.get(event_id)

    @classmethod
    def from_row_cached(cls, row: sqlite3.Row) -> EventRow:
        """``from_row`` through a bounded per-process cache.

        Event rows never change once written, and delivery decisions re-read every
        unread row of a session on each hook call; decoding their JSON columns once
        instead of every time keeps a session with a thousand unread events fast.
        """
        event_id = row["id"]
        cached = _EVENT_CACHE.get(event_id)
        if cached is not None:
            return cached
        event = cls.from_row(row)
        _EVENT_CACHE.put(event_id, event, _stored_chars(row))
        return event

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspacePath": self.workspace_path,
            "monitorId": self.monitor_id,
            "sourceName": self.source_name,
            "urgency": self.urgency,
            "title": self.title,
            "body": self.body,
            "summary": self.summary,
            "payload": self.payload,
            "snapshotMetadata": self.snapshot_metadata,
            "snapshotText": self.snapshot_text,
            "diffText": self.diff_text,
            "objectKey": self.object_key,
            "baselineStrategy": self.baseline_strategy,
            "queryScope": self.query_scope,
            "tags": self.tags,
            "createdAt": iso_from_seconds(self.created_at),
        }


_TEXT_COLUMNS = (
    "title",
    "body",
    "summary",
    "payload",
    "snapshot_metadata",
    "snapshot_text",
    "diff_text",
    "query_scope",
)


def _stored_chars(row: sqlite3.Row) -> int:
    return sum(len(row[column] or "") for column in _TEXT_COLUMNS)


class _DecodedEvents:
    """Least recently used decoded events, bounded by count and by their stored text.

    The count bound is twice the thousand unread events the hook benchmark delivers
    from; unread rows are read again at every hook and stay at the recent end, so what
    is evicted is what was acknowledged. At 20,000 the cache took hours of a busy
    daemon's events before it stopped growing (benchmarks/bench_soak.py). The text
    bound keeps a run of large events (a command's whole output, a long diff) from
    holding hundreds of MiB for weeks: decoded, an event takes about 1.5 times its
    stored text.
    """

    def __init__(self, max_events: int, max_chars: int) -> None:
        self.max_events = max_events
        self.max_chars = max_chars
        self.chars = 0
        self._entries: OrderedDict[str, tuple[EventRow, int]] = OrderedDict()

    def get(self, event_id: str) -> EventRow | None:
        entry = self._entries.get(event_id)
        if entry is None:
            return None
        self._entries.move_to_end(event_id)
        return entry[0]

    def put(self, event_id: str, event: EventRow, chars: int) -> None:
        if chars > self.max_chars:
            return  # would evict everything else and then itself
        previous = self._entries.pop(event_id, None)
        if previous is not None:
            self.chars -= previous[1]
        self._entries[event_id] = (event, chars)
        self.chars += chars
        while len(self._entries) > self.max_events or self.chars > self.max_chars:
            self.chars -= self._entries.popitem(last=False)[1][1]

    def clear(self) -> None:
        self._entries.clear()
        self.chars = 0


_EVENT_CACHE = _DecodedEvents(max_events=2_048, max_chars=4 * 1024 * 1024)

"""Delivery vocabulary: constants, errors, and the rows and JSON shapes a claim is built from.

DB timestamps are epoch seconds; everything printed here is ISO-8601 with ms and ``Z``.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, cast, get_args

from agentmonitors.clock import iso_from_ms
from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.delivery.wire import EventSummary, SessionRecord
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.store.records import EventRow, iso_from_seconds
from agentmonitors.untrusted import clean_line

# The type of a checked lifecycle; tests hold it equal to LIFECYCLES.
Lifecycle = Literal["turn-interruptible", "turn-idle", "post-compact"]
Urgency = Literal["low", "normal", "high"]
URGENCIES: tuple[str, ...] = get_args(Urgency)
Role = Literal["lead", "subagent"]
ROLES: tuple[str, ...] = get_args(Role)

HIGH_URGENCY_SETTLE_MS = 15_000
MAX_RECAP_EVENTS = 10
RESERVATION_TTL_MS = 30_000
LATEST_HIGH_TITLES = 5


class SessionNotFound(LookupError):
    """No session has this id; the message is the one clients match on."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Session not found: {session_id}")
        self.session_id = session_id


class InvalidLifecycle(ValueError):
    def __init__(self, lifecycle: str) -> None:
        super().__init__(
            f"Unknown delivery lifecycle {lifecycle!r}: expected one of {', '.join(LIFECYCLES)}"
        )


def check_lifecycle(lifecycle: str) -> Lifecycle:
    if lifecycle not in LIFECYCLES:
        raise InvalidLifecycle(lifecycle)
    return lifecycle  # type: ignore[return-value]


def session_json(row: sqlite3.Row) -> SessionRecord:
    """``AgentSessionRecord``: the columns in camelCase, null optionals left out."""
    record: dict[str, Any] = {
        "id": row["id"],
        "adapter": row["adapter"],
        "hostSessionId": row["host_session_id"],
        "agentIdentity": row["agent_identity"],
        "role": row["role"],
    }
    if row["workspace_path"]:
        record["workspacePath"] = row["workspace_path"]
    record["hookStatePath"] = row["hook_state_path"]
    record["status"] = row["status"]
    record["baselineAt"] = iso_from_seconds(row["baseline_at"])
    record["lastActiveAt"] = iso_from_seconds(row["last_active_at"])
    if row["last_recap_at"] is not None:
        record["lastRecapAt"] = iso_from_seconds(row["last_recap_at"])
    if row["dormant_at"] is not None:
        record["dormantAt"] = iso_from_seconds(row["dormant_at"])
    record["createdAt"] = iso_from_seconds(row["created_at"])
    record["updatedAt"] = iso_from_seconds(row["updated_at"])
    # Built key by key: the compatible key order puts optionals between required keys
    # (docs/compatibility.md, "JSON shapes").
    return cast("SessionRecord", record)


# The state columns read next to ``e.*``, aliased so they never shadow the event's.
STATE_COLUMNS = (
    "s.first_notified_at AS s_first_notified_at, s.acknowledged_at AS s_acknowledged_at,"
    " s.diff_text AS s_diff_text, s.interpret_digest AS s_interpret_digest"
)


# (``"net"``, monitor, object key, workspace)
NetGroup = tuple[str, str, str, str]


def net_group(event: EventRow) -> NetGroup | None:
    """The group the ``net`` collapse folds this event into: events of a ``net`` monitor
    that carry a snapshot and an object key; None for any other event."""
    if event.baseline_strategy != "net" or event.snapshot_text is None or event.object_key is None:
        return None
    return ("net", event.monitor_id, event.object_key, event.workspace_path or "")


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """One session's projection of one event: the shared event plus this recipient's state."""

    event: EventRow
    first_notified_at: int | None
    acknowledged_at: int | None
    recipient_diff: str | None
    digest: str | None
    # Derived from the event once, as plain slots: every decision reads them for each
    # of a session's unread rows, and computing them per read added up.
    id: str = field(init=False, repr=False, compare=False)
    urgency: str = field(init=False, repr=False, compare=False)
    group: NetGroup | None = field(init=False, repr=False, compare=False)
    """The ``net`` collapse group, or None for an event that is its own group."""

    def __post_init__(self) -> None:
        event = self.event
        object.__setattr__(self, "id", event.id)
        object.__setattr__(self, "urgency", event.urgency)
        object.__setattr__(self, "group", net_group(event))

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DeliveryRow:
        return cls(
            event=EventRow.from_row_cached(row),
            first_notified_at=row["s_first_notified_at"],
            acknowledged_at=row["s_acknowledged_at"],
            recipient_diff=row["s_diff_text"],
            digest=row["s_interpret_digest"],
        )

    @property
    def pending(self) -> bool:
        """Unread and never surfaced (the caller's query already excludes acknowledged rows)."""
        return self.acknowledged_at is None and self.first_notified_at is None

    def settled(self, now_ms: int) -> bool:
        # An event created "in the future" means the wall clock was set back since:
        # it is settled now, not a jump later (runtime/notify.py, debounce_due_ms).
        age = now_ms - self.event.created_at * 1000
        return age >= HIGH_URGENCY_SETTLE_MS or age < 0

    @property
    def delivery_state(self) -> str:
        if self.acknowledged_at is not None:
            return "acknowledged"
        if self.first_notified_at is not None:
            return "claimed"
        return "unread"

    def recipient_summary(self) -> str:
        event = self.event
        return self.digest or event.summary or event.body or event.title


def summary_json(row: DeliveryRow, diff_override: str | None = None) -> EventSummary:
    """``DeliveryEventSummary`` for one surfaced row."""
    event = row.event
    record: EventSummary = {
        "eventId": event.id,
        "monitorId": event.monitor_id,
        "title": event.title,
        "summary": row.recipient_summary(),
        "objectDetail": event.summary,
        "urgency": event.urgency,
        "createdAt": iso_from_ms(int(event.created_at) * 1000),
        "body": event.body,
    }
    diff = diff_override
    if diff is None:
        diff = row.recipient_diff if row.recipient_diff is not None else event.diff_text
    if diff:
        record["diffText"] = diff
        if event.object_key is not None:
            record["objectKey"] = event.object_key
    return record


def summarize(rows: list[DeliveryRow]) -> str:
    """``<i>. <summary or title>`` lines, 1-based."""
    # A title is one line of the recap: a break in it must not start a line of its own.
    return "\n".join(
        f"{index}. {clean_line(row.recipient_summary() or row.event.title)}"
        for index, row in enumerate(rows, start=1)
    )

"""Shared vocabulary of the ``monitor explain`` stages: labels, statuses, the read context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmonitors.catalog.trust import BLOCKED_REASON as APPROVAL_REASON
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.human import human_duration
from agentmonitors.sources.permit import approve_command
from agentmonitors.store.records import EventRow, HistoryRow, MonitorStateRow

if TYPE_CHECKING:
    from agentmonitors.catalog.definitions import Blocked
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.store.database import Database

STAGE_LABELS: dict[str, str] = {
    "definition": "Definition",
    "scheduling": "Scheduling",
    "observation": "Observation",
    "notify": "Notify state",
    "materialization": "Materialization",
    "delivery": "Projection and delivery",
}
STAGE_IDS = tuple(STAGE_LABELS)
STATUS_GLYPHS: dict[str, str] = {"ok": "✓", "healthy": "○", "pending": "⏳", "failure": "✗"}
STATUS_SEVERITY: dict[str, int] = {"ok": 0, "healthy": 1, "pending": 2, "failure": 3}
# Observation outcomes that mean "the source ran and there was nothing to report".
IDLE_RESULTS = frozenset({"no-change", "rebaselined", "no-files-matched"})
SESSION_HINT = (
    "sessions register when a Claude Code session starts (its SessionStart hook runs "
    "`agentmonitors session start`)"
)
BLOCKED_REASON = "Not evaluated: the definition stage failed."
AWAITING_REASON = "Not evaluated: the monitor awaits the user's approval."


def _stage(
    stage_id: str, status: str, reason: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": stage_id,
        "label": STAGE_LABELS[stage_id],
        "status": status,
        "reason": reason,
        "details": details if details is not None else {},
    }


def _awaiting_approval(blocked: Blocked) -> dict[str, Any]:
    monitor, requirement = blocked.monitor, blocked.requirement
    command = approve_command(monitor.id)
    reason = (
        f"{APPROVAL_REASON}: this project monitor {requirement.summary()}; it runs once the "
        f"user approves it with `{command}` (an agent must not approve for the user)."
    )
    details = {
        "filePath": monitor.file_path,
        "sourceName": monitor.source_name,
        "approval": {
            "status": "awaiting",
            "reach": requirement.reach,
            "hash": requirement.digest,
            "command": command,
        },
    }
    return _stage("definition", "pending", reason, details)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _every(ms: int) -> str:
    return f"every {human_duration(ms)}"


# --------------------------------------------------------------------------- context


@dataclass
class _Context:
    """Everything the stages read, gathered once."""

    db: Database
    monitor_id: str
    workspace: str
    now_ms: int
    runtime: Runtime | None
    monitor: MonitorDefinition | None = None
    state: MonitorStateRow | None = None
    history: list[HistoryRow] = field(default_factory=list)
    events: list[EventRow] = field(default_factory=list)
    latest_event: EventRow | None = None
    event_total: int = 0
    schedule_error: str | None = None
    daemon_running: bool | None = None
    """False when no daemon serves the workspace (nothing runs until one starts)."""

    @property
    def notify_state(self) -> dict[str, Any]:
        return self.state.notify_state if self.state is not None else {}

    @property
    def latest(self) -> HistoryRow | None:
        return self.history[0] if self.history else None


def _event_total(ctx: _Context) -> int:
    with ctx.db.read() as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM monitor_events WHERE monitor_id = ?"
            " AND (workspace_path = ? OR workspace_path IS NULL)",
            (ctx.monitor_id, ctx.workspace),
        ).fetchone()
    return int(row[0])

"""``doctor``'s per-monitor rows and ``monitor:<id>`` checks.

Each runnable monitor is read through ``monitor explain`` (the same scheduling and
delivery reading, so the two never disagree), then checked against the world: a
monitor whose source says what it looks at is missing (``Source.target_problem``: globs
that match no file, a branch that does not exist) is named as such. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.catalog.definitions import Definitions
from agentmonitors.catalog.trust import BLOCKED_REASON
from agentmonitors.diagnosis.explain import explain_monitor
from agentmonitors.diagnosis.watches import watch_fix, watch_session
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.human import human_duration
from agentmonitors.sources.permit import approve_command

if TYPE_CHECKING:
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.sources.base import SourceRegistry
    from agentmonitors.store.database import Database


@dataclass(frozen=True)
class MonitorReading:
    row: dict[str, Any]
    check: dict[str, Any]
    lines: list[str]


def _check(name: str, status: str, detail: str, remediation: str | None) -> dict[str, Any]:
    return {"name": name, "status": status, "detail": detail, "remediation": remediation}


def _row(
    monitor_id: str,
    source: str | None,
    urgency: str | None,
    *,
    valid: bool,
    error: str | None = None,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": monitor_id,
        "sourceType": source,
        "urgency": urgency,
        "valid": valid,
        "validationError": error,
        "lastObservedAt": None,
        "neverObserved": True,
        "nextDueAt": None,
        "cadence": None,
        "lastEventAt": None,
        "delivery": {"unread": 0, "claimed": 0, "acknowledged": 0},
    }
    declared_by = watch_session(monitor_id)
    if declared_by is not None:
        # An agent's watch, not a file: the session that declared it owns it.
        row["declaredBySession"] = declared_by
    return row


def target_problem(
    monitor: MonitorDefinition, workspace: str, registry: SourceRegistry
) -> str | None:
    """What the monitor looks at and cannot find, as its source tells (``target_problem``)."""
    source = registry.traits(monitor.source_name)
    return source.target_problem(monitor.source_config, workspace)


def _cadence(details: Mapping[str, Any]) -> str | None:
    if isinstance(details.get("cron"), str):
        return f"cron '{details['cron']}' ({details.get('timezone')})"
    interval = details.get("intervalMs")
    if isinstance(interval, int):
        return f"every {human_duration(interval)}"
    return None


def _next_due(at: str | None, schedule: Mapping[str, Any]) -> str:
    """When the monitor is next observed; with no daemon, when one runs."""
    if schedule.get("waitsForDaemon"):
        return "when the daemon runs" if at is None else f"{at}, if the daemon runs by then"
    return at or "not scheduled"


def _delivery(report: Mapping[str, Any]) -> dict[str, int]:
    counts = {"unread": 0, "claimed": 0, "acknowledged": 0}
    latest = report["events"][0]["id"] if report.get("events") else None
    for projection in report.get("projections") or ():
        state = projection.get("deliveryState")
        if state in counts and projection.get("eventId") == latest:
            counts[state] += 1
    return counts


def _delivery_words(counts: Mapping[str, int]) -> str:
    parts = [f"{state} in {count} session(s)" for state, count in counts.items() if count]
    return ", ".join(parts) if parts else "in no lead session (no session was open)"


def _runnable(
    db: Database,
    registry: SourceRegistry,
    monitor: MonitorDefinition,
    *,
    workspace: str,
    monitors_dir: str,
    now_ms: int,
    runtime: Runtime | None,
    daemon_running: bool | None,
) -> MonitorReading:
    report = explain_monitor(
        db,
        registry,
        monitor_id=monitor.id,
        workspace=workspace,
        monitors_dir=monitors_dir,
        history_limit=1,
        event_limit=1,
        now_ms=now_ms,
        runtime=runtime,
        daemon_running=daemon_running,
    )
    stages = {stage["id"]: stage for stage in report["stages"]}
    schedule = stages.get("scheduling", {}).get("details") or {}
    row = _row(monitor.id, monitor.source_name, str(monitor.frontmatter.band), valid=True)
    observation = report["observations"][0] if report["observations"] else None
    event = report["events"][0] if report["events"] else None
    row.update(
        lastObservedAt=schedule.get("lastObservationAt"),
        neverObserved=schedule.get("lastObservationAt") is None,
        nextDueAt=schedule.get("nextDueAt"),
        cadence=_cadence(schedule),
        lastEventAt=None if event is None else event["createdAt"],
        delivery=_delivery(report),
    )
    lines = [
        "last observation: "
        + (
            "never"
            if observation is None
            else f"{observation['createdAt']} ({observation['result']})"
        ),
        f"next due: {_next_due(row['nextDueAt'], schedule)}"
        + (f" ({row['cadence']})" if row["cadence"] else ""),
        "last event: "
        + (
            "none"
            if event is None
            else f"{event['createdAt']} {event['title']!r}: {_delivery_words(row['delivery'])}"
        ),
    ]
    problem = target_problem(monitor, workspace, registry)
    if problem is not None:
        row["targetProblem"] = problem
    check = _runnable_check(monitor, row, observation, problem, stages)
    return MonitorReading(row, check, lines)


def _runnable_check(
    monitor: MonitorDefinition,
    row: Mapping[str, Any],
    observation: Mapping[str, Any] | None,
    problem: str | None,
    stages: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    name = f"monitor:{monitor.id}"
    explain = f"agentmonitors monitor explain {monitor.id}"
    scheduling = stages.get("scheduling", {})
    if scheduling.get("status") == "failure":
        return _check(name, "fail", str(scheduling.get("reason")), f"fix {monitor.file_path}")
    if observation is not None and observation["result"] == "errored":
        data = observation.get("observationData") or {}
        message = data.get("error") if isinstance(data, dict) else None
        return _check(
            name,
            "fail",
            f"the last observation failed: {message or 'unknown error'}",
            f"fix the cause, then check with `{explain}`",
        )
    if problem is not None:
        return _check(
            name,
            "idle",
            f"valid, but {problem}; it reports nothing until that exists",
            # ``monitor test`` would only fail on the same missing files: the way on is
            # the file itself (what it names, or the files it should match).
            f"check what {monitor.file_path} names, or create what it should match",
        )
    if row["neverObserved"]:
        return _check(
            name,
            "idle",
            "valid; not observed yet",
            "the daemon observes it at its next tick once a Claude Code session runs here"
            " (or run `agentmonitors daemon run`)",
        )
    detail = f"valid; last observed {row['lastObservedAt']}"
    if observation is not None:
        detail += f" ({observation['result']})"
    return _check(name, "pass", detail, None)


def read_monitors(
    db: Database,
    registry: SourceRegistry,
    definitions: Definitions,
    *,
    workspace: str,
    monitors_dir: str,
    now_ms: int,
    runtime: Runtime | None,
    daemon_running: bool | None = None,
) -> list[MonitorReading]:
    """A reading per monitor: runnable, blocked by approval, or invalid, sorted by id."""
    readings: dict[str, MonitorReading] = {}
    for monitor in definitions.runnable:
        readings[monitor.id] = _runnable(
            db,
            registry,
            monitor,
            workspace=workspace,
            monitors_dir=monitors_dir,
            now_ms=now_ms,
            runtime=runtime,
            daemon_running=daemon_running,
        )
    for blocked in definitions.blocked:
        monitor = blocked.monitor
        row = _row(monitor.id, monitor.source_name, str(monitor.frontmatter.band), valid=True)
        row["blocked"] = BLOCKED_REASON
        detail = f"{BLOCKED_REASON}: this project monitor {blocked.requirement.summary()}"
        command = approve_command(monitor.id)
        check = _check(
            f"monitor:{monitor.id}",
            "idle",
            detail,
            f"{command} (the user approves; an agent must not approve for the user)",
        )
        readings[monitor.id] = MonitorReading(row, check, [])
    for problem in definitions.problems:
        monitor_id = problem.monitor_id
        if monitor_id in readings:
            continue
        source = None if problem.source_name == "unknown" else problem.source_name
        row = _row(monitor_id, source, None, valid=False, error=problem.message)
        fix = (
            f"fix {problem.file_path}, then run `agentmonitors validate`"
            if problem.file_path
            else watch_fix(monitor_id)
        )
        check = _check(f"monitor:{monitor_id}", "fail", f"invalid: {problem.message}", fix)
        readings[monitor_id] = MonitorReading(row, check, [])
    return [readings[key] for key in sorted(readings)]

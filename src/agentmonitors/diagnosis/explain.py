"""``monitor explain``: a read-only, stage-by-stage diagnosis of one monitor.

The report walks the pipeline in order — definition, scheduling, observation,
notify state, materialization, projection and delivery — and gives each stage a
status:

- ``ok``: the stage produced what the next one needs;
- ``healthy``: the stage ran and "nothing to do" was the right outcome (an idle
  monitor is not a bug);
- ``pending``: the stage is holding on purpose (debounce, rollup, throttle,
  backoff) or waits for an upstream stage that has not produced anything yet;
- ``failure``: a real fault the author has to act on.

The verdict is the first stage of the most severe status. Everything is read from
the definitions on disk and the persisted store (plus, inside the daemon, the
runtime's in-memory backoff), so the same report can be built with no daemon
running. Nothing here writes.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.catalog.definitions import DefinitionCache, Problem
from agentmonitors.clock import iso_from_ms
from agentmonitors.diagnosis.explain_common import (
    AWAITING_REASON,
    BLOCKED_REASON,
    STAGE_IDS,
    STAGE_LABELS,
    STATUS_GLYPHS,
    STATUS_SEVERITY,
    _awaiting_approval,
    _Context,
    _event_total,
    _stage,
)
from agentmonitors.diagnosis.explain_delivery import (
    _delivery,
    _read_delivery,
)
from agentmonitors.diagnosis.explain_liveness import liveness_report
from agentmonitors.diagnosis.explain_stages import (
    _materialization,
    _notify,
    _observation,
    _scheduling,
)
from agentmonitors.diagnosis.holds import DeliveryProbe
from agentmonitors.diagnosis.watches import missing_watch_reason, watch_session, with_watches
from agentmonitors.monitor.discovery import project_monitors_dir
from agentmonitors.monitor.parse import monitor_id_for
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.paths import resolve_socket_path
from agentmonitors.store import queries

if TYPE_CHECKING:
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.sources.base import SourceRegistry
    from agentmonitors.store.database import Database


# --------------------------------------------------------------------------- definition


def _monitor_json(monitor_id: str, monitor: MonitorDefinition | None) -> dict[str, Any]:
    if monitor is None:
        return {
            "id": monitor_id,
            "displayName": None,
            "filePath": None,
            "sourceName": None,
            "urgency": None,
        }
    return {
        "id": monitor.id,
        "displayName": monitor.display_name,
        "filePath": monitor.file_path,
        "sourceName": monitor.source_name,
        "urgency": str(monitor.frontmatter.band),
    }


def block_of(monitor_id: str) -> dict[str, Any]:
    return _monitor_json(monitor_id, None)


def _problem_matches(problem: Problem, monitor_id: str) -> bool:
    return problem.monitor_id == monitor_id or monitor_id_for(problem.file_path) == monitor_id


def _definition(
    db: Database,
    registry: SourceRegistry,
    workspace: str,
    monitors_dir: str | None,
    monitor_id: str,
) -> tuple[dict[str, Any], MonitorDefinition | None, dict[str, Any]]:
    """(definition stage, the runnable definition or None, the report's ``monitor`` block).

    The monitor files and the workspace's active watches alike: a watch is explained
    as the tick runs it.
    """
    cache = DefinitionCache(registry)
    definitions = with_watches(cache.load(workspace, monitors_dir), cache, db, workspace)
    declared_by = watch_session(monitor_id)
    for monitor in definitions.runnable:
        if monitor.id == monitor_id:
            what = "Monitor definition" if declared_by is None else "Watch declaration"
            found: dict[str, Any] = {
                "filePath": monitor.file_path,
                "sourceName": monitor.source_name,
            }
            if declared_by is not None:
                found["declaredBySession"] = declared_by
            stage = _stage(
                "definition",
                "ok",
                f"{what} is valid{_approval(cache, monitor, workspace, found)}.",
                found,
            )
            return stage, monitor, _monitor_json(monitor_id, monitor)
    for blocked in definitions.blocked:
        if blocked.monitor.id == monitor_id:
            return _awaiting_approval(blocked), None, _monitor_json(monitor_id, blocked.monitor)
    problems = [
        problem for problem in definitions.problems if _problem_matches(problem, monitor_id)
    ]
    if problems and declared_by is not None:
        reason = f"The watch no longer runs: {problems[0].message}"
        listed = {"problems": [{"message": problem.message} for problem in problems]}
        return _stage("definition", "failure", reason, listed), None, block_of(monitor_id)
    if problems:
        first = problems[0]
        # The file parsed (it failed a later check, or is a duplicate): its name and
        # urgency are still worth showing.
        parsed = cache.parse(first.file_path, None)
        known = parsed if isinstance(parsed, MonitorDefinition) else None
        block = _monitor_json(monitor_id, known)
        block["filePath"] = first.file_path
        if first.source_name != "unknown":
            block["sourceName"] = first.source_name
        if first.message.startswith("Duplicate monitor id"):
            reason = first.message
        elif known is not None:
            reason = f"Monitor definition is invalid: {first.message}"
        else:
            reason = f"MONITOR.md failed to parse: {first.message}"
        details: dict[str, Any] = {
            "filePath": first.file_path,
            "problems": [
                {"filePath": problem.file_path, "message": problem.message} for problem in problems
            ],
        }
        return _stage("definition", "failure", reason, details), None, block
    if declared_by is not None:
        reason = missing_watch_reason(monitor_id)
        return _stage("definition", "failure", reason, {}), None, block_of(monitor_id)
    known_ids = sorted(
        {monitor.id for monitor in definitions.runnable if watch_session(monitor.id) is None}
        | {problem.monitor_id for problem in definitions.problems if "/" not in problem.monitor_id}
    )
    folder = monitors_dir or project_monitors_dir(workspace)
    listing = f"known ids: {', '.join(known_ids)}" if known_ids else "no monitors are defined"
    reason = f'Monitor "{monitor_id}" was not found in {folder}; {listing}.'
    details = {"monitorsDir": folder, "knownIds": known_ids}
    return _stage("definition", "failure", reason, details), None, _monitor_json(monitor_id, None)


def _approval(
    cache: DefinitionCache, monitor: MonitorDefinition, workspace: str, details: dict[str, Any]
) -> str:
    """How a runnable monitor stands with approval, as the tail of the definition's reason."""
    try:
        requirement = cache.requirement_of(monitor, workspace)
    except ValueError:
        return ""
    if requirement is None:
        details["approval"] = "not-needed"
        return "; it needs no approval (it reads only the project)"
    details["approval"] = "approved"
    return f"; the user approved what it does ({requirement.summary()})"


# --------------------------------------------------------------------------- report


def _verdict(stages: list[dict[str, Any]]) -> dict[str, Any]:
    """The first stage of the most severe status (failure > pending > healthy > ok)."""
    worst = stages[0]
    for stage in stages[1:]:
        if STATUS_SEVERITY[stage["status"]] > STATUS_SEVERITY[worst["status"]]:
            worst = stage
    return {"status": worst["status"], "stage": worst["id"], "reason": worst["reason"]}


def explain_monitor(
    db: Database,
    registry: SourceRegistry,
    *,
    monitor_id: str,
    workspace: str,
    monitors_dir: str | None,
    history_limit: int = 10,
    event_limit: int = 10,
    now_ms: int,
    runtime: Runtime | None = None,
    leases: Callable[[str], frozenset[str]] | None = None,
    socket_path: str | None = None,
    wall_ms: int | None = None,
    daemon_running: bool | None = None,
) -> dict[str, Any]:
    """The ``monitor.explain`` report of ``monitor_id`` in ``workspace`` (read-only).

    ``runtime`` is the daemon's live runtime, for its in-memory backoff, and
    ``leases`` its delivery service's in-flight leases (a session id to the leased
    event ids); pass None for both when explaining in-process without a daemon.
    ``socket_path`` sizes a hook delivery as the hook would (default: the workspace's
    socket); ``wall_ms`` is the time transport heartbeats are judged at (default: now).
    ``daemon_running`` False says no daemon serves the workspace: the schedule then says
    that nothing runs until one starts, rather than a due time nobody will keep.
    """
    ctx = _Context(
        db=db,
        monitor_id=monitor_id,
        workspace=workspace,
        now_ms=now_ms,
        runtime=runtime,
        daemon_running=daemon_running,
    )
    definition, monitor, block = _definition(db, registry, workspace, monitors_dir, monitor_id)
    ctx.monitor = monitor
    with db.read() as conn:
        ctx.state = queries.load_monitor_state(conn, monitor_id, workspace)
    ctx.history = queries.list_history(
        db, monitor_id=monitor_id, workspace=workspace, limit=max(1, history_limit)
    )
    fetched = queries.list_monitor_events(
        db, monitor_id=monitor_id, workspace=workspace, limit=max(1, event_limit)
    )
    ctx.latest_event = fetched[0] if fetched else None
    ctx.events = fetched[: max(0, event_limit)]
    ctx.event_total = _event_total(ctx)
    delivery = _read_delivery(ctx)

    stages = [definition]
    if monitor is None:
        skipped = AWAITING_REASON if definition["status"] == "pending" else BLOCKED_REASON
        stages += [_stage(stage_id, "pending", skipped) for stage_id in STAGE_IDS[1:]]
    else:
        stages.append(_scheduling(ctx, monitor, registry.traits(monitor.source_name)))
        stages.append(_observation(ctx, monitor))
        stages.append(_notify(ctx, monitor))
        stages.append(_materialization(ctx, stages[2]["status"], stages[3]["status"]))
        probe = DeliveryProbe(
            leases=leases,
            socket_path=socket_path or resolve_socket_path(workspace),
            wall_ms=wall_ms,
        )
        stages.append(_delivery(ctx, delivery, stages[4]["status"], probe))
    # Beside the stages, never in the verdict (diagnosis/explain_liveness.py).
    liveness = None if monitor is None else liveness_report(db, monitor, workspace, now_ms)
    return {
        "monitorId": monitor_id,
        "generatedAt": iso_from_ms(now_ms),
        "monitor": block,
        "stages": stages,
        **({"liveness": liveness} if liveness is not None else {}),
        "verdict": _verdict(stages),
        "observations": [row.to_json() for row in ctx.history[: max(0, history_limit)]],
        "events": [event.to_json() for event in ctx.events],
        "projections": delivery.projections,
        "leadSessions": delivery.lead_sessions,
        **_left_out(ctx, monitor_id, history_limit, event_limit),
    }


def _left_out(
    ctx: _Context, monitor_id: str, history_limit: int, event_limit: int
) -> dict[str, Any]:
    """How many observations and events the limits left out, and the flags that show them."""
    observations = queries.count_history(ctx.db, monitor_id=monitor_id, workspace=ctx.workspace)
    more = {
        "moreObservations": max(0, observations - max(0, history_limit)),
        "moreEvents": max(0, ctx.event_total - len(ctx.events)),
    }
    if not any(more.values()):
        return more
    flags = [
        f"{flag} {total}"
        for flag, total, left in (
            ("--history-limit", observations, more["moreObservations"]),
            ("--event-limit", ctx.event_total, more["moreEvents"]),
        )
        if left
    ]
    command = f"agentmonitors monitor explain {shlex.quote(monitor_id)} {' '.join(flags)}"
    return {**more, "showMore": f"`{command}` lists them all"}


def has_persisted_state(report: Mapping[str, Any]) -> bool:
    """Whether the store holds anything for this monitor: history, events or state.

    The CLI's no-daemon fallback prints the report only when this is true.
    """
    if report.get("observations") or report.get("events") or report.get("projections"):
        return True
    for stage in report.get("stages", ()):
        details = stage.get("details") or {}
        if stage.get("id") == "scheduling" and details.get("stateRecorded"):
            return True
        if stage.get("id") == "materialization" and details.get("count"):
            return True
    return False


def render_explain_text(report: Mapping[str, Any]) -> str:
    """``Monitor <id>``, one ``<glyph> <Label>: <reason>`` line per stage, then the verdict."""
    lines = [f"Monitor {report['monitorId']}"]
    labels = dict(STAGE_LABELS)
    for stage in report.get("stages", ()):
        label = stage.get("label") or labels.get(stage["id"], stage["id"])
        labels[stage["id"]] = label
        glyph = STATUS_GLYPHS.get(stage["status"], "?")
        lines.append(f"{glyph} {label}: {stage['reason']}")
        if stage["id"] == "delivery":
            # One line per session: the hold that applies now and who is listening.
            sessions = (stage.get("details") or {}).get("sessions") or ()
            lines += [f"    {item['line']}" for item in sessions if item.get("line")]
    liveness = report.get("liveness")
    if liveness:
        lines.append(f"• Liveness: {liveness['reason']}")
    verdict = report.get("verdict")
    if verdict:
        label = labels.get(verdict["stage"], verdict["stage"])
        lines.append(f"Verdict: {verdict['status']} at {label} - {verdict['reason']}")
    return "\n".join(lines)

"""``doctor``: one read-only health report of a workspace, from enablement to delivery.

The checks run in a fixed order (project, monitors, daemon, lead session, each
monitor, each transport, the delivery verdict) and each is ``pass``, ``fail``,
``skip`` or ``idle``; a ``fail`` or ``idle`` says what to do. The same report is
built inside the daemon (``doctor.report``, with live hold diagnosis) or, when no
daemon answers, in-process from the database opened read-only. Nothing here writes:
not the database, not the heartbeat registry, not the enable file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentmonitors import __version__
from agentmonitors.catalog.definitions import DefinitionCache, Definitions
from agentmonitors.clock import iso_from_ms
from agentmonitors.delivery.transports.registry import transports as registered_transports
from agentmonitors.diagnosis.doctor_command import hook_command_check
from agentmonitors.diagnosis.doctor_database import database_check
from agentmonitors.diagnosis.doctor_file_events import file_events_check
from agentmonitors.diagnosis.doctor_monitors import MonitorReading, read_monitors
from agentmonitors.diagnosis.doctor_transports import (
    BLOCKING,
    Diagnose,
    Expected,
    Lead,
    host_checks,
    pipeline_problems,
    transports,
)
from agentmonitors.diagnosis.watches import watch_session, with_watches
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.discovery import project_monitors_dir
from agentmonitors.paths import ignored_enable_values
from agentmonitors.store.database import Database, StoreError
from agentmonitors.workspace import (
    WAKE_ALL,
    data_root,
    enable_file_path,
    read_local_state,
    wake_setting,
)

if TYPE_CHECKING:
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.sources.base import SourceRegistry

STATUSES = ("pass", "fail", "skip", "idle")


@dataclass(frozen=True)
class DoctorContext:
    """Where to look and what this run expects; the daemon and the CLI fill it in."""

    workspace: str
    monitors_dir: str
    socket_path: str
    daemon_running: bool
    now_ms: int
    """The monitors' clock (the daemon's own, which a test may set)."""
    wall_ms: int
    """Real time, for heartbeats: their writers stamp them with it."""
    home: str
    data_root: str
    version: str
    diagnose: Diagnose | None = None
    runtime: Runtime | None = None
    store_reopened: Mapping[str, Any] | None = None
    db_path: str | None = None
    store_problem: str | None = None
    """Why the database could not be read (then the report is built without it)."""
    older_daemon: bool = False
    """A daemon answered but predates ``doctor.report``: it runs an older install."""
    quick_check: str | None = None
    """``PRAGMA quick_check``'s answer when the caller ran it already (the daemon, off its
    loop); None runs it here."""
    file_events: Mapping[str, Any] | None = None
    """The running daemon's file-event state (``daemon status``'s ``fileEvents``)."""


def doctor_context(
    request: Mapping[str, Any],
    *,
    workspace: str,
    monitors_dir: str | None,
    socket_path: str,
    now_ms: int,
    diagnose: Diagnose,
    runtime: Runtime | None,
    store_reopened: Mapping[str, Any] | None,
    db_path: str,
    file_events: Mapping[str, Any] | None = None,
) -> DoctorContext:
    """The context of a ``doctor.report`` request answered by a running daemon.

    The caller's HOME, data root and version (additive params) are what bindings are
    judged against, so a daemon started from another environment is caught too.
    """
    target = request.get("workspacePath") or workspace
    return DoctorContext(
        workspace=target,
        monitors_dir=request.get("monitorsDir") or monitors_dir or project_monitors_dir(target),
        socket_path=request.get("socketPath") or socket_path,
        daemon_running=True,
        now_ms=now_ms,
        wall_ms=time.time_ns() // 1_000_000,
        home=request.get("home") or os.path.expanduser("~"),
        data_root=request.get("dataRoot") or data_root(),
        version=request.get("version") or __version__,
        diagnose=diagnose,
        runtime=runtime,
        store_reopened=store_reopened,
        db_path=db_path,
        file_events=file_events,
    )


def _check(name: str, status: str, detail: str, remediation: str | None = None) -> dict[str, Any]:
    return {"name": name, "status": status, "detail": detail, "remediation": remediation}


def _leads(db: Database | None, workspace: str) -> list[Lead]:
    if db is None:
        return []
    try:
        with db.read() as conn:
            rows = conn.execute(
                "SELECT id, host_session_id, adapter FROM agent_sessions WHERE role = 'lead'"
                " AND status = 'active' AND workspace_path = ? ORDER BY created_at, id",
                (workspace,),
            ).fetchall()
    except (StoreError, sqlite3.Error):
        return []
    return [Lead(str(row[0]), str(row[1]), str(row[2])) for row in rows]


def wake_description(value: str | None) -> str:
    """What the enable file's ``wake:`` does (an unknown value is the follow transport's
    advisory too)."""
    urgencies = wake_setting(value)
    if urgencies is None:
        return f"wake: {value!r} is not understood, so every change wakes an idle session"
    if urgencies == WAKE_ALL:
        return "every change wakes an idle session (wake: all)"
    return "only high-urgency changes wake an idle session (wake: high)"


def _project_check(workspace: str) -> dict[str, Any]:
    state = read_local_state(workspace)
    if state.enabled:
        detail = f"enabled ({enable_file_path(workspace)})"
        # A repository may commit the enable file: a `socket:`/`db:` of its choosing is
        # never used, and the user should know it is there.
        ignored = ignored_enable_values(workspace, state)
        if ignored:
            detail += "; advisory: " + " ".join(ignored)
        detail += "; " + wake_description(state.wake)
        return _check("project-enabled", "pass", detail)
    return _check(
        "project-enabled",
        "fail",
        f"{workspace} is not enabled: no valid {enable_file_path(workspace)} with enabled: true,"
        " so a Claude Code session here never starts the daemon",
        f"agentmonitors init --enable-only (in {workspace})",
    )


ADD_MONITOR = "agentmonitors init <name> --type file-fingerprint (adds a monitor file)"


def _folder_check(ctx: DoctorContext, watches: int) -> dict[str, Any]:
    """The monitors folder: there, or why its absence is (or is not) a problem.

    A project need not have monitor files: its agents' watches run without them, and a
    new project has nothing yet. Only a folder the user named with ``--dir`` must exist.
    """
    monitors_dir = ctx.monitors_dir
    if os.path.isdir(monitors_dir):
        return _check("monitors-directory", "pass", f"{monitors_dir} exists")
    if os.path.abspath(monitors_dir) != os.path.abspath(project_monitors_dir(ctx.workspace)):
        return _check("monitors-directory", "fail", f"{monitors_dir} does not exist", ADD_MONITOR)
    if watches:
        detail = (
            f"no {monitors_dir} folder: no monitor files, and {watches} agent-declared"
            " watch(es) run without one (`agentmonitors init <name>` adds a monitor file)"
        )
        return _check("monitors-directory", "skip", detail, ADD_MONITOR)
    detail = f"no {monitors_dir} folder yet: nothing is watched until a monitor is added"
    return _check("monitors-directory", "idle", detail, ADD_MONITOR)


def _folder_checks(
    ctx: DoctorContext, definitions: Definitions, watches: int
) -> list[dict[str, Any]]:
    count = len(definitions.runnable) + len(definitions.blocked)
    ids = {problem.monitor_id for problem in definitions.problems}
    folder = _folder_check(ctx, watches)
    if count == 0 and not ids:
        also = f" ({watches} agent-declared watch(es))" if watches else ""
        valid = _check("monitors-valid", "skip", f"no monitor files are defined{also}")
    elif ids:
        valid = _check(
            "monitors-valid",
            "fail",
            f"{len(ids)} invalid monitor(s): {', '.join(sorted(ids))}",
            "agentmonitors validate",
        )
    else:
        waiting = f", {len(definitions.blocked)} awaiting approval" if definitions.blocked else ""
        valid = _check("monitors-valid", "pass", f"{count} valid monitor(s){waiting}")
    return [folder, valid]


def _daemon_check(ctx: DoctorContext, leads: Sequence[Lead]) -> dict[str, Any]:
    if ctx.daemon_running:
        detail = f"running at {ctx.socket_path}"
        reopened = ctx.store_reopened
        if reopened:
            return _check(
                "daemon-reachable",
                "pass",
                f"{detail}; its database was {reopened.get('reason')} while it ran and was"
                f" reopened at {reopened.get('at')} (events stored before that are gone)",
            )
        return _check("daemon-reachable", "pass", detail)
    status = "fail" if leads else "idle"
    why = (
        "an active lead session expects it"
        if leads
        else "it starts when a Claude Code session opens here"
    )
    if ctx.older_daemon:
        return _check(
            "daemon-reachable",
            status,
            f"the daemon at {ctx.socket_path} predates this agentmonitors (it does not know"
            " doctor.report); this report was read from the database",
            f"agentmonitors daemon stop --socket {ctx.socket_path} (the next Claude Code"
            " session here starts the installed version)",
        )
    return _check(
        "daemon-reachable",
        status,
        f"no daemon answers at {ctx.socket_path} ({why})",
        "start a Claude Code session in this project, or run `agentmonitors daemon run`",
    )


def _lead_check(ctx: DoctorContext, leads: Sequence[Lead]) -> dict[str, Any]:
    if ctx.store_problem is not None:
        return _check(
            "lead-session",
            "fail",
            f"cannot read the database {ctx.db_path}: {ctx.store_problem}",
            f"move {ctx.db_path} aside; the next Claude Code session here starts a fresh one",
        )
    if leads:
        names = ", ".join(f"{lead.session_id} (host {lead.host_session_id})" for lead in leads)
        return _check("lead-session", "pass", f"{len(leads)} active lead session(s): {names}")
    payload = '{"session_id":"<id>","hook_event_name":"SessionStart","cwd":"' + ctx.workspace + '"}'
    return _check(
        "lead-session",
        "idle",
        f"no active lead session for workspace {ctx.workspace}",
        f"open Claude Code in {ctx.workspace} (the plugin's SessionStart hook registers it),"
        f" or: echo '{payload}' | agentmonitors session start",
    )


def _listening(transport_rows: Sequence[Mapping[str, Any]]) -> str:
    """Which transports listen: a healthy heartbeat each (``session start`` writes the
    hook's, so a session the plugin opened has one before its first prompt)."""
    healthy = {row["name"] for row in transport_rows if row["healthy"]}
    # An additive transport (``events follow``, started by the agent) never changes the
    # method: only those that declare ``decides_listening`` are named.
    named = [
        kind.name
        for kind in registered_transports()
        if kind.decides_listening and kind.name in healthy
    ]
    if len(named) > 1:
        return "both"
    return named[0] if named else "none"


def _transport_check(row: Mapping[str, Any], leads: Sequence[Lead]) -> dict[str, Any]:
    name = f"transport:{row['name']}"
    problems = row["problems"]
    if not row["configured"]:
        return _check(name, "skip", f"no {row['name']} heartbeat for this workspace's sessions")
    blocking = [problem for problem in problems if problem["code"] in BLOCKING]
    if blocking:
        status = "fail" if leads else "idle"
        first = blocking[0]
        codes = ", ".join(problem["code"] for problem in blocking)
        return _check(name, status, f"{codes}: {first['detail']}", first["remediation"])
    advisory = ", ".join(problem["code"] for problem in problems)
    state = "running" if row["running"] else "not running"
    detail = f"{state}, last delivery {row['lastDelivery'] or 'never'}"
    return _check(name, "pass", detail + (f" (advisory: {advisory})" if advisory else ""))


def _verdict(
    ctx: DoctorContext,
    leads: Sequence[Lead],
    listening: str,
    pipeline: Sequence[Mapping[str, str]],
) -> tuple[bool, str, dict[str, Any]]:
    blocking = [problem for problem in pipeline if problem["code"] in BLOCKING]
    if not leads:
        verdict = "no active lead session: nothing is delivered until a session opens here"
        remediation = f"open Claude Code in {ctx.workspace}; its SessionStart hook registers a lead"
        return False, verdict, _check("delivery-verdict", "idle", verdict, remediation)
    if blocking:
        verdict = f"not deliverable now: {blocking[0]['detail']}"
        return (
            False,
            verdict,
            _check("delivery-verdict", "fail", verdict, blocking[0]["remediation"]),
        )
    if listening == "none":
        verdict = "no transport listens for the active lead session(s)"
        remediation = "restart the Claude Code session with the agentmonitors plugin enabled"
        return False, verdict, _check("delivery-verdict", "fail", verdict, remediation)
    verdict = f"events reach the active lead session(s) through {listening}"
    return True, verdict, _check("delivery-verdict", "pass", verdict)


def build_report(
    db: Database | None, registry: SourceRegistry, ctx: DoctorContext
) -> dict[str, Any]:
    """The ``doctor.report`` value (read-only; ``db`` may be None when none exists yet)."""
    cache = DefinitionCache(registry)
    definitions = cache.load(ctx.workspace, ctx.monitors_dir)
    leads = _leads(db, ctx.workspace)
    # The folder checks count the files; the readings cover the agents' watches too.
    watched = with_watches(definitions, cache, db, ctx.workspace)
    ids = [monitor.id for monitor in watched.runnable]
    ids += [blocked.monitor.id for blocked in watched.blocked]
    ids += [problem.monitor_id for problem in watched.problems]
    watches = sum(watch_session(monitor_id) is not None for monitor_id in ids)
    checks = [_project_check(ctx.workspace), *_folder_checks(ctx, definitions, watches)]
    checks += [_daemon_check(ctx, leads), *file_events_check(ctx.file_events)]
    checks += [_lead_check(ctx, leads), hook_command_check()]
    store_check, store_facts = database_check(
        db, ctx.workspace, ctx.db_path, ctx.store_problem, ctx.quick_check
    )
    checks.append(store_check)
    checks += host_checks(leads)
    readings = _readings(db, registry, watched, ctx)
    checks += [reading.check for reading in readings]
    expected = Expected(
        ctx.workspace, ctx.socket_path, ctx.home, ctx.data_root, ctx.version, ctx.wall_ms
    )
    pipeline = pipeline_problems(ctx.daemon_running, ctx.socket_path, leads, ctx.diagnose)
    rows = transports(leads, expected, pipeline)
    checks += [_transport_check(row, leads) for row in rows]
    listening = _listening(rows)
    deliverable, verdict, verdict_check = _verdict(ctx, leads, listening, pipeline)
    checks.append(verdict_check)
    summary = {
        "passed": sum(check["status"] == "pass" for check in checks),
        "failed": sum(check["status"] == "fail" for check in checks),
        "skipped": sum(check["status"] == "skip" for check in checks),
        "idle": sum(check["status"] == "idle" for check in checks),
    }
    remediation = [
        check["remediation"]
        for check in checks
        if check["status"] in ("fail", "idle") and check["remediation"]
    ]
    report: dict[str, Any] = {
        "ok": summary["failed"] == 0,
        "generatedAt": iso_from_ms(ctx.now_ms),
        "workspace": ctx.workspace,
        "monitorsDir": ctx.monitors_dir,
        "daemon": {"running": ctx.daemon_running, "socketPath": ctx.socket_path},
        "leadSession": _lead_json(leads),
        "transports": rows,
        "pipelineProblems": list(pipeline),
        "deliveryWillReachThisSession": listening,
        "deliverable": deliverable,
        "verdict": verdict,
        "remediation": list(dict.fromkeys(remediation)),
        "checks": checks,
        "monitors": [{**reading.row, "lines": reading.lines} for reading in readings],
        "summary": summary,
    }
    if store_facts is not None:
        report["database"] = {"path": ctx.db_path, **store_facts}
    if ctx.store_problem is not None:
        report["database"] = {"path": ctx.db_path, "problem": ctx.store_problem}
    if ctx.store_reopened:
        report["database"] = {
            **report.get("database", {}),
            "path": ctx.db_path,
            "reopened": dict(ctx.store_reopened),
        }
    return report


def _lead_json(leads: Sequence[Lead]) -> dict[str, Any] | None:
    if not leads:
        return None
    first = leads[0]
    return {
        "sessionId": first.session_id,
        "hostSessionId": first.host_session_id,
        "activeLeads": [
            {"sessionId": lead.session_id, "hostSessionId": lead.host_session_id} for lead in leads
        ],
    }


def _readings(
    db: Database | None, registry: SourceRegistry, definitions: Definitions, ctx: DoctorContext
) -> list[MonitorReading]:
    """Monitor readings; with no database yet they are judged on their definitions alone."""
    with contextlib.ExitStack() as stack:
        store = db if db is not None else stack.enter_context(Database(":memory:"))
        return read_monitors(
            store,
            registry,
            definitions,
            workspace=ctx.workspace,
            monitors_dir=ctx.monitors_dir,
            now_ms=ctx.now_ms,
            runtime=ctx.runtime,
            daemon_running=ctx.daemon_running,
        )


def exit_code(report: Mapping[str, Any]) -> int:
    """1 iff a check failed."""
    return 0 if report.get("ok") else 1

"""``agentmonitors daemon status``: whether the daemon runs, and what it holds."""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.daemon.reaping import reaping_text
from agentmonitors.cli.output import format_option, print_document, report_error
from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, DaemonRefusedError, call
from agentmonitors.diagnosis.doctor_file_events import file_events_text
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.runtime.human import human_duration
from agentmonitors.workspace import resolve_workspace


@click.command("status", help="Whether the daemon runs, and what it holds.")
@socket_option
@workspace_option
@format_option(("text", "json", "toon"), "text")
def status(socket: str | None, workspace: str | None, output_format: str) -> int:
    workspace_path = resolve_workspace(workspace)
    socket_path = resolve_socket_path(workspace_path, socket)
    report: dict[str, Any]
    try:
        live = call(socket_path, "status", {})
        report = {"running": True, "socketPath": socket_path, **(live or {})}
    except DaemonConnectionError as error:
        if isinstance(error, DaemonRefusedError):
            click.echo(f"error: {error.message}", err=True)
        report = {
            "running": False,
            "socketPath": socket_path,
            **_offline_counts(resolve_db_path(workspace_path)),
        }
    except DaemonError as error:
        return report_error(str(error), output_format == "json")
    if print_document(report, output_format):
        return 0
    lines = [
        f"Daemon running: {'yes' if report['running'] else 'no'}",
        f"Socket: {socket_path}",
    ]
    if report.get("pid") is not None:
        lines.append(f"Pid: {report['pid']}")
    if report.get("uptimeMs") is not None:
        lines.append(f"Uptime: {human_duration(int(report['uptimeMs']))}")
    lines += [
        f"Sessions: {report['sessions']}",
        f"Active sessions: {report['activeSessions']}",
        f"Dormant sessions: {report['dormantSessions']}",
        f"Events: {report['events']}",
    ]
    if report["running"]:
        lines.append(f"Reaping: {reaping_text(report.get('reapAfterMs'))}")
    if isinstance(report.get("fileEvents"), dict):
        lines.append(f"File events: {file_events_text(report['fileEvents'])}")
    database = report.get("database")
    reopened = database.get("reopened") if isinstance(database, dict) else None
    if isinstance(database, dict) and isinstance(reopened, dict):
        lines.append(
            f"Database: {database.get('path')} was {reopened.get('reason')} while the daemon ran;"
            f" reopened at {reopened.get('at')} ({reopened.get('sessionsKept', 0)} session(s)"
            " carried over, events stored before are gone)"
        )
    lines += _database_lines(database)
    click.echo("\n".join(lines))
    return 0


def _database_lines(database: object) -> list[str]:
    """Size, oldest event, retention and a full disk, as a running daemon reports them."""
    if not isinstance(database, dict) or "sizeBytes" not in database:
        return []
    # Lazy: only a running daemon's report has these facts (tests/test_imports.py).
    from agentmonitors.store.health import human_bytes

    line = (
        f"Database size: {human_bytes(int(database['sizeBytes']))}"
        f" (+ {human_bytes(int(database.get('walBytes') or 0))} write-ahead log),"
        f" oldest event {database.get('oldestEventAt') or 'none'}"
    )
    retention = database.get("retention")
    if isinstance(retention, dict):
        keep = int(retention.get("keepMs") or 0)
        line += f", keeps what is done with {human_duration(keep) if keep > 0 else 'forever'}"
    lines = [line]
    if isinstance(retention, dict) and retention.get("problem"):
        lines.append(f"Retention: {retention['problem']}")
    full = database.get("diskFull")
    if isinstance(full, dict):
        lines.append(
            f"Database: disk full since {full.get('since')}: writes fail ({full.get('error')});"
            " nothing stored is lost, and writing resumes once space is freed"
        )
    return lines


def _offline_counts(db_path: str) -> dict[str, int]:
    """Counts read straight from the database, without creating one that isn't there."""
    # Lazy: only a daemon that is not running needs sqlite3 (tests/test_imports.py).
    from agentmonitors.store import database, queries

    empty = {"sessions": 0, "activeSessions": 0, "dormantSessions": 0, "events": 0}
    if database.is_memory(db_path) or not os.path.exists(db_path):
        return empty
    try:
        with database.Database(db_path) as db:
            counts = queries.session_counts(db)
            events = queries.count_rows(db, "monitor_events")
    except database.StoreError:
        return empty
    return {
        "sessions": counts["total"],
        "activeSessions": counts["active"],
        "dormantSessions": counts["dormant"],
        "events": events,
    }

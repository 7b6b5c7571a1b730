"""``agentmonitors doctor``: why events do (or do not) reach the agent, check by check."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

import click

from agentmonitors import __version__
from agentmonitors.cli.common_options import dir_option, socket_option, workspace_option
from agentmonitors.cli.daemon_calls import manual_socket
from agentmonitors.cli.output import (
    clean_output,
    echo,
    format_option,
    print_document,
    print_error,
    report_error,
)
from agentmonitors.cli.tick_once import registry_with_warnings, workspace_and_monitors
from agentmonitors.daemon.client import (
    DaemonConnectionError,
    DaemonError,
    DaemonUnsupportedError,
    call,
)
from agentmonitors.diagnosis.doctor import DoctorContext, build_report, exit_code
from agentmonitors.diagnosis.doctor_store import open_read_only
from agentmonitors.diagnosis.doctor_text import render_doctor_text
from agentmonitors.fastpath.lean_dataclass import replace
from agentmonitors.paths import resolve_db_path
from agentmonitors.store.database import StoreError
from agentmonitors.workspace import data_root


def doctor_params(workspace: str, monitors_dir: str, socket_path: str) -> dict[str, Any]:
    """``doctor.report``'s params; the extra keys let the daemon judge bindings as this
    shell sees them (its HOME, data root and installed version)."""

    return {
        "monitorsDir": monitors_dir,
        "workspacePath": workspace,
        "socketPath": socket_path,
        "home": os.path.expanduser("~"),
        "dataRoot": data_root(),
        "version": __version__,
    }


def _in_process(
    workspace: str, monitors_dir: str, socket_path: str, *, older_daemon: bool
) -> dict[str, Any]:
    """The report with no daemon: the database opened read-only, nothing written."""
    now_ms = time.time_ns() // 1_000_000
    db_path = resolve_db_path(workspace)
    ctx = DoctorContext(
        workspace=workspace,
        monitors_dir=monitors_dir,
        socket_path=socket_path,
        daemon_running=False,
        now_ms=now_ms,
        wall_ms=now_ms,
        home=os.path.expanduser("~"),
        data_root=data_root(),
        version=__version__,
        db_path=db_path,
        older_daemon=older_daemon,
    )
    registry = registry_with_warnings(workspace)
    try:
        db = open_read_only(db_path)
        try:
            return build_report(db, registry, ctx)
        finally:
            if db is not None:
                db.close()
    except (StoreError, sqlite3.Error) as error:
        # An unreadable store is a finding, not a reason to print nothing.
        return build_report(None, registry, replace(ctx, store_problem=str(error)))


@click.command(
    "doctor", help="Check the workspace end to end: monitors, daemon, sessions, delivery."
)
@dir_option
@workspace_option
@socket_option
@format_option(("text", "json", "toon"), "text")
def command(
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    output_format: str,
) -> int:
    as_json = output_format == "json"
    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    socket_path = manual_socket(socket, workspace_path)
    older = False
    try:
        report = call(
            socket_path,
            "doctor.report",
            doctor_params(workspace_path, monitors_path, socket_path),
            timeout_s=10,
        )
    except (DaemonConnectionError, DaemonUnsupportedError) as error:
        report = None
        older = isinstance(error, DaemonUnsupportedError)
    except DaemonError as error:
        return report_error(f"Doctor failed: {error}", as_json)
    if report is None:
        try:
            report = _in_process(workspace_path, monitors_path, socket_path, older_daemon=older)
        except StoreError as error:
            return report_error(f"Doctor failed: {error}", as_json)
    if not print_document(report, output_format):
        echo(clean_output(render_doctor_text(report)))
    if exit_code(report) == 0:
        return 0
    return print_error(failed_checks_line(report))


def failed_checks_line(report: dict[str, Any]) -> str:
    """The one stderr line of a failing report: which checks failed (docs/cli.md)."""
    failed = [
        str(check.get("name"))
        for check in report.get("checks") or []
        if isinstance(check, dict) and check.get("status") == "fail"
    ]
    if not failed:
        return "doctor found a problem (see the report above)"
    return f"{len(failed)} check(s) failed: {', '.join(failed)}; each names its fix in the report"

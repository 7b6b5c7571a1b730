"""``agentmonitors monitor explain``: why a monitor did or did not reach a session."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.common_options import dir_option, socket_option, workspace_option
from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.monitor.daemon_or_store import (
    BUSY_NOTICE,
    NEVER_OBSERVED_NOTICE,
    Unanswered,
    ask_daemon,
    nothing_persisted,
    open_existing,
)
from agentmonitors.cli.output import (
    emit,
    format_option,
    notice,
    print_error,
    report_error,
    resolve_format,
    warn,
)
from agentmonitors.cli.tick_once import workspace_and_monitors
from agentmonitors.clock import SystemClock
from agentmonitors.daemon.client import DaemonError
from agentmonitors.diagnosis.explain import (
    explain_monitor,
    has_persisted_state,
    render_explain_text,
)
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.sources.registry import load_registry
from agentmonitors.store.database import Database, StoreError


def _not_defined(report: dict[str, Any]) -> bool:
    """Whether no monitor file defines the id (the definition stage lists the known ids)."""
    stage = report["stages"][0] if report.get("stages") else {}
    details = stage.get("details") or {}
    return stage.get("status") == "failure" and "knownIds" in details


@click.command("explain", help="Why a monitor did or did not reach a session, stage by stage.")
@click.argument("monitor_id", shell_complete=complete_monitor_id)
@dir_option
@workspace_option
@socket_option
@click.option(
    "--history-limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many recent observations to show.",
)
@click.option(
    "--event-limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many recent events to show.",
)
@format_option(("toon", "json", "text"), None)
def explain(
    monitor_id: str,
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    history_limit: int,
    event_limit: int,
    output_format: str | None,
) -> int:
    fmt = resolve_format(output_format)
    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    socket_path = resolve_socket_path(workspace_path, socket)
    params = {
        "monitorId": monitor_id,
        "monitorsDir": monitors_path,
        "workspacePath": workspace_path,
        "historyLimit": history_limit,
        "eventLimit": event_limit,
    }
    try:
        report = ask_daemon(socket_path, "monitor.explain", params)
    except DaemonError as error:
        return report_error(f"Explain failed: {error}", fmt == "json")
    if not isinstance(report, Unanswered):
        if _not_defined(report) and not has_persisted_state(report):
            return report_error(report["stages"][0]["reason"], fmt == "json")
        emit(report, fmt, lambda: render_explain_text(report))
        return _explain_exit(report)

    try:
        db_path = resolve_db_path(workspace_path)
        existing = open_existing(db_path)
        # With no database yet the definition stages can still be judged; use a
        # throwaway in-memory one rather than creating the real file.
        with existing if existing is not None else Database(":memory:") as db:
            offline = explain_monitor(
                db,
                load_registry(warn),
                monitor_id=monitor_id,
                workspace=workspace_path,
                monitors_dir=monitors_path,
                history_limit=history_limit,
                event_limit=event_limit,
                now_ms=SystemClock().now_ms(),
                # A daemon that did not answer in time may still run: say nothing of it.
                daemon_running=None if report.notice is BUSY_NOTICE else False,
            )
    except StoreError as error:
        return report_error(f"Explain failed: {error}", fmt == "json")
    if _not_defined(offline) and not has_persisted_state(offline):
        return report_error(offline["stages"][0]["reason"], fmt == "json")
    definition_failed = (
        any(
            stage["id"] in ("definition", "scheduling") and stage["status"] == "failure"
            for stage in offline["stages"]
        )
        or offline["stages"][0]["status"] == "pending"
    )  # awaiting the user's approval
    if not definition_failed and not has_persisted_state(offline) and report.notice is BUSY_NOTICE:
        return report_error(nothing_persisted(socket_path), fmt == "json")
    if definition_failed:
        emit(offline, fmt, lambda: render_explain_text(offline))
        return _explain_exit(offline)
    # Not observed yet is no failure: its stages say so, and what starts it.
    said = report.notice if has_persisted_state(offline) else NEVER_OBSERVED_NOTICE
    notice(said)
    # JSON keeps the notice as a field too (the shape only grows).
    noticed = {"notice": said, **offline} if fmt == "json" else offline
    emit(noticed, fmt, lambda: render_explain_text(offline))
    return _explain_exit(offline)


def _explain_exit(report: dict[str, Any]) -> int:
    """1 with the verdict on stderr when a stage failed; 0 otherwise (docs/cli.md)."""
    verdict = report.get("verdict") or {}
    if verdict.get("status") != "failure":
        return 0
    return print_error(f"monitor {report.get('monitorId', '')}: {verdict.get('reason', '')}")

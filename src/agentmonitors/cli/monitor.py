"""``agentmonitors monitor``: look into one monitor's history and delivery path."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.monitor_approve import approve
from agentmonitors.cli.monitor_test import test_monitor
from agentmonitors.cli.output import (
    USAGE,
    echo,
    emit,
    format_option,
    notice,
    print_error,
    report_error,
    resolve_format,
    warn,
)
from agentmonitors.workspace import resolve_workspace

if TYPE_CHECKING:
    from agentmonitors.cli.output import OutputFormat

OFFLINE_NOTICE = "No daemon running — showing persisted state from the last tick."
NEVER_OBSERVED_NOTICE = (
    "No daemon running, and nothing is stored for this monitor yet — showing its definition"
    " and schedule."
)
BUSY_NOTICE = (
    "The daemon did not answer in time (it may be busy) — showing persisted state from the"
    " last tick."
)


class Unanswered:
    """No answer from the daemon: none runs there, or it did not answer in time."""

    def __init__(self, timed_out: bool) -> None:
        self.notice = BUSY_NOTICE if timed_out else OFFLINE_NOTICE


@click.group("monitor", help="Inspect one monitor.")
def command() -> None:
    pass


command.add_command(test_monitor)
command.add_command(approve)


def _nothing_persisted(socket_path: str) -> str:
    """What to do when a daemon did not answer in time and the database has nothing."""
    return (
        f"The daemon at {socket_path} did not answer in time (it may be busy) and there is"
        " no persisted state to show. Try again, and run `agentmonitors daemon status` if"
        " it keeps happening."
    )


def _no_history_notice(workspace: str) -> str:
    from agentmonitors.diagnosis.explain_stages import start_hint

    return f"No daemon running, and nothing has been observed here yet: {start_hint(workspace)}."


def ask_daemon(socket_path: str, method: str, params: dict[str, Any]) -> Any:
    """The daemon's answer, or ``Unanswered`` when none comes (the caller reads the store).

    Any other failure (an application error, an older daemon) is raised.
    """
    from agentmonitors.daemon.client import DaemonConnectionError, call

    try:
        return call(socket_path, method, params)
    except DaemonConnectionError as error:
        return Unanswered(error.timed_out)


def _open_existing(db_path: str) -> Any:
    """The workspace database if it exists; never creates one just to find it empty."""
    from agentmonitors.store.database import Database, is_memory

    if is_memory(db_path) or not os.path.exists(db_path):
        return None
    return Database(db_path)


def _unknown_id(monitor_id: str, workspace: str) -> str | None:
    """The error for an id no monitor file defines, or None when one does.

    Called only when the id has no stored history: an id with history is known
    even after its file is gone.
    """
    from agentmonitors.monitor.discovery import discover

    scan = discover(workspace)
    ids = {monitor.id for monitor in scan.monitors} | {
        failure.id for failure in scan.errors if failure.id is not None
    }
    if monitor_id in ids:
        return None
    listing = f"known ids: {', '.join(sorted(ids))}" if ids else "the project defines no monitors"
    return (
        f'Unknown monitor id "{monitor_id}": no monitor file defines it and it has no'
        f" history ({listing})."
    )


# --------------------------------------------------------------------------- history


def history_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No observation history."
    from agentmonitors.untrusted import clean_line

    return "\n".join(
        f"{row['createdAt']}  {row['result']:<10}  {clean_line(str(row['monitorId']))}"
        f"  ({clean_line(str(row['sourceName']))})"
        for row in rows
    )


@command.command(
    "history",
    help="Recent observations, newest first: of the monitor MONITOR_ID, or without it of"
    " every monitor.",
)
@click.argument("monitor_id", required=False, shell_complete=complete_monitor_id)
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory; when given, also filters the rows.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Show at most this many observations.",
)
@click.option("--dir", "dir_", hidden=True)
@format_option(("toon", "json", "text"), None)
def history(
    monitor_id: str | None,
    socket: str | None,
    workspace: str | None,
    limit: int,
    dir_: str | None,
    output_format: str | None,
) -> int:
    from agentmonitors.daemon.client import DaemonError
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

    fmt = resolve_format(output_format)
    if dir_ is not None:
        click.echo(
            "error: no such option: --dir. monitor history scopes by --workspace "
            "(the project directory), not --dir.",
            err=True,
        )
        return USAGE
    workspace_path = resolve_workspace(workspace)
    socket_path = resolve_socket_path(workspace_path, socket)
    params: dict[str, Any] = {"limit": limit, "withTotal": True}
    if monitor_id is not None:
        params["monitorId"] = monitor_id
    if workspace is not None:
        params["workspacePath"] = workspace_path
    more = _MoreHistory(monitor_id, workspace, socket)
    try:
        reply = ask_daemon(socket_path, "history.list", params)
    except DaemonError as error:
        return report_error(f"History failed: {error}", fmt == "json")
    if not isinstance(reply, Unanswered):
        # A daemon that predates ``withTotal`` answers the bare array.
        rows = reply["observations"] if isinstance(reply, dict) else reply
        total = reply["total"] if isinstance(reply, dict) else len(rows)
        if not rows and monitor_id is not None:
            unknown = _unknown_id(monitor_id, workspace_path)
            if unknown is not None:
                return report_error(unknown, fmt == "json")
        more.emit(rows, total, fmt)
        return 0

    from agentmonitors.store import queries
    from agentmonitors.store.database import StoreError

    try:
        db = _open_existing(resolve_db_path(workspace_path))
        found: list[dict[str, Any]] = []
        stored = 0
        if db is not None:
            scope = workspace_path if workspace is not None else None
            with db:
                found = [
                    row.to_json()
                    for row in queries.list_history(
                        db, monitor_id=monitor_id, workspace=scope, limit=limit
                    )
                ]
                stored = queries.count_history(db, monitor_id=monitor_id, workspace=scope)
    except StoreError as error:
        return report_error(f"History failed: {error}", fmt == "json")
    unknown = None if found or monitor_id is None else _unknown_id(monitor_id, workspace_path)
    if unknown is not None:
        return report_error(unknown, fmt == "json")
    if not found and reply.notice is BUSY_NOTICE:
        return report_error(_nothing_persisted(socket_path), fmt == "json")
    # The notice is about the answer, not part of it: stderr, so the data parses. Nothing
    # observed yet is an empty history (as a running daemon answers it), not a failure.
    notice(reply.notice if found else _no_history_notice(workspace_path))
    more.emit(found, stored, fmt)
    return 0


class _MoreHistory:
    """A history listing and, when its limit left some out, how many and how to see them."""

    def __init__(self, monitor_id: str | None, workspace: str | None, socket: str | None) -> None:
        import shlex

        words = ["agentmonitors", "monitor", "history"]
        if monitor_id is not None:
            words.append(monitor_id)
        for flag, value in (("--workspace", workspace), ("--socket", socket)):
            if value is not None:
                words += [flag, value]
        self.command = " ".join(shlex.quote(word) for word in words)

    def line(self, shown: int, total: int) -> str:
        left = total - shown
        noun = "observation" if left == 1 else "observations"
        return f"… and {left} more {noun}; `{self.command} --limit {total}` shows them"

    def emit(self, rows: list[dict[str, Any]], total: int, fmt: OutputFormat) -> None:
        """The rows as ``fmt`` asks; the closing line after them, or on stderr under JSON
        (its stdout is the bare array of its compatible shape)."""
        closing = self.line(len(rows), total) if total > len(rows) else ""
        if fmt == "text":
            emit(rows, fmt, lambda: "\n".join(filter(None, [history_text(rows), closing])))
            return
        emit(rows, fmt, str)
        if closing and fmt == "json":
            notice(closing)
        elif closing:
            echo(closing)


# --------------------------------------------------------------------------- explain


def _not_defined(report: dict[str, Any]) -> bool:
    """Whether no monitor file defines the id (the definition stage lists the known ids)."""
    stage = report["stages"][0] if report.get("stages") else {}
    details = stage.get("details") or {}
    return stage.get("status") == "failure" and "knownIds" in details


@command.command("explain", help="Why a monitor did or did not reach a session, stage by stage.")
@click.argument("monitor_id", shell_complete=complete_monitor_id)
@click.option(
    "--dir",
    "monitors_dir",
    metavar="DIR",
    help="Monitors folder (default: <project>/.claude/monitors).",
)
@click.option("--workspace", help="Project directory (default: the current project).")
@click.option("--socket", help="Unix socket of the daemon.")
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
    from agentmonitors.cli.daemon import workspace_and_monitors
    from agentmonitors.daemon.client import DaemonError
    from agentmonitors.diagnosis.explain import has_persisted_state, render_explain_text
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

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

    from agentmonitors.clock import SystemClock
    from agentmonitors.diagnosis.explain import explain_monitor
    from agentmonitors.sources.registry import load_registry
    from agentmonitors.store.database import Database, StoreError

    try:
        db_path = resolve_db_path(workspace_path)
        existing = _open_existing(db_path)
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
        return report_error(_nothing_persisted(socket_path), fmt == "json")
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

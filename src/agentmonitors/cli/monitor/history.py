"""``agentmonitors monitor history``: recent observations, newest first."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.monitor.daemon_or_store import (
    BUSY_NOTICE,
    Unanswered,
    ask_daemon,
    no_history_notice,
    nothing_persisted,
    open_existing,
    unknown_id,
)
from agentmonitors.cli.output import (
    USAGE,
    echo,
    emit,
    format_option,
    notice,
    report_error,
    resolve_format,
)
from agentmonitors.daemon.client import DaemonError
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.store import queries
from agentmonitors.store.database import StoreError
from agentmonitors.untrusted import clean_line
from agentmonitors.workspace import resolve_workspace

if TYPE_CHECKING:
    from agentmonitors.cli.output import OutputFormat


def history_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No observation history."

    return "\n".join(
        f"{row['createdAt']}  {row['result']:<10}  {clean_line(str(row['monitorId']))}"
        f"  ({clean_line(str(row['sourceName']))})"
        for row in rows
    )


@click.command(
    "history",
    help="Recent observations, newest first: of the monitor MONITOR_ID, or without it of"
    " every monitor.",
)
@click.argument("monitor_id", required=False, shell_complete=complete_monitor_id)
@socket_option
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
            unknown = unknown_id(monitor_id, workspace_path)
            if unknown is not None:
                return report_error(unknown, fmt == "json")
        more.emit(rows, total, fmt)
        return 0

    try:
        db = open_existing(resolve_db_path(workspace_path))
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
    unknown = None if found or monitor_id is None else unknown_id(monitor_id, workspace_path)
    if unknown is not None:
        return report_error(unknown, fmt == "json")
    if not found and reply.notice is BUSY_NOTICE:
        return report_error(nothing_persisted(socket_path), fmt == "json")
    # The notice is about the answer, not part of it: stderr, so the data parses. Nothing
    # observed yet is an empty history (as a running daemon answers it), not a failure.
    notice(reply.notice if found else no_history_notice(workspace_path))
    more.emit(found, stored, fmt)
    return 0


class _MoreHistory:
    """A history listing and, when its limit left some out, how many and how to see them."""

    def __init__(self, monitor_id: str | None, workspace: str | None, socket: str | None) -> None:
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

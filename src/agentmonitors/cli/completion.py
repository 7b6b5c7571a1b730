"""Shell completion of monitor ids, session ids and source names.

Click calls these while the user presses Tab, so each one must answer fast and
never fail loudly: any trouble means "no suggestions". Session ids come from the
daemon under a short timeout, else from the database read-only; completion never
starts a daemon and never creates a database.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import click
from click.shell_completion import CompletionItem

from agentmonitors.daemon.client import DaemonError, call
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.store.database import is_memory
from agentmonitors.workspace import resolve_workspace

# Long enough for a busy daemon on a loaded machine, short enough that Tab never hangs.
DAEMON_TIMEOUT_S = 0.5
DB_BUSY_TIMEOUT_S = 0.2


def _param(ctx: click.Context, name: str) -> Any:
    """A value the user already typed on this command line (or its parent's)."""
    while ctx is not None:
        value = ctx.params.get(name)
        if value:
            return value
        ctx = ctx.parent  # type: ignore[assignment]
    return None


def _workspace(ctx: click.Context) -> str:
    return resolve_workspace(_param(ctx, "workspace"))


def monitor_ids(ctx: click.Context) -> list[tuple[str, str]]:
    """(id, display name) of the monitors the command would see, sorted by id."""
    # Lazy: parsing monitor files is for Tab alone, not for every command that offers ids.
    from agentmonitors.monitor.discovery import discover

    monitors_dir = _param(ctx, "monitors_dir")
    scan = discover(_workspace(ctx), project_dir=monitors_dir)
    return sorted({(monitor.id, monitor.display_name) for monitor in scan.monitors})


def complete_monitor_id(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    del param
    try:
        found = monitor_ids(ctx)
    except Exception:  # completion never breaks the shell
        return []
    return [CompletionItem(mid, help=name) for mid, name in found if mid.startswith(incomplete)]


def complete_monitor_id_or_path(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Monitor ids first; once nothing matches (a path is being typed), file names."""
    items = complete_monitor_id(ctx, param, incomplete)
    return items or [CompletionItem(incomplete, type="file")]


def _sessions_from_daemon(socket_path: str) -> list[dict[str, Any]] | None:
    try:
        records = call(socket_path, "session.list", {}, timeout_s=DAEMON_TIMEOUT_S)
    except DaemonError:
        return None
    return [record for record in records if isinstance(record, dict)]


def _sessions_from_database(db_path: str) -> list[dict[str, Any]]:
    if is_memory(db_path) or not os.path.isfile(db_path):
        return []
    uri = "file:" + db_path.replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=DB_BUSY_TIMEOUT_S)
    try:
        rows = connection.execute(
            "SELECT id, status, agent_identity FROM agent_sessions ORDER BY last_active_at DESC"
        ).fetchall()
    finally:
        connection.close()
    return [{"id": row[0], "status": row[1], "agentIdentity": row[2]} for row in rows]


def _ignore_line(line: str) -> None:
    del line


def session_records(ctx: click.Context) -> list[dict[str, Any]]:
    """The sessions the daemon knows, or the database's when no daemon answers."""
    workspace = _workspace(ctx)
    # A completion prints candidates only: no warning or notice may reach the terminal.
    quiet = _ignore_line
    socket_path = resolve_socket_path(workspace, _param(ctx, "socket"), warn=quiet, notice=quiet)
    records = _sessions_from_daemon(socket_path)
    if records is None:
        records = _sessions_from_database(resolve_db_path(workspace, notice=quiet))
    return records


def complete_session_id(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    del param
    try:
        records = session_records(ctx)
    except Exception:  # completion never breaks the shell
        return []
    return [
        CompletionItem(
            record["id"],
            help=" ".join(str(record.get(key) or "") for key in ("status", "agentIdentity")),
        )
        for record in records
        if isinstance(record.get("id"), str) and record["id"].startswith(incomplete)
    ]


def complete_source_name(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Installed plugin sources (the ones update and remove act on)."""
    del ctx, param
    try:
        # Lazy: importlib.metadata is for Tab alone, not for every `source` command.
        from agentmonitors.sources.packages import installed_plugins

        plugins = installed_plugins()
    except Exception:  # completion never breaks the shell
        return []
    return [
        CompletionItem(plugin.name, help=f"{plugin.distribution} {plugin.version}")
        for plugin in sorted(plugins, key=lambda plugin: plugin.name)
        if plugin.name.startswith(incomplete)
    ]

"""What ``snapshot``, ``diff``, ``summary`` and ``inspect`` share: the agent's read-only follow-ups.

Each command is its own module (``cli/snapshot.py`` …); this one asks the daemon and,
when none runs, the database, and holds the options they have in common.

Read-only and immediate: the daemon answers when it runs (with its clock and its
in-flight deliveries); otherwise the workspace database is read, opened read-only.
Neither path observes a source, claims, acknowledges or moves a cursor.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

from agentmonitors.cli.completion import complete_monitor_id, complete_session_id
from agentmonitors.cli.daemon_calls import manual_socket
from agentmonitors.cli.output import (
    echo,
    emit,
    format_option,
    print_error,
    report_error,
    resolve_format,
)
from agentmonitors.daemon.client import (
    DaemonConnectionError,
    DaemonError,
    DaemonUnsupportedError,
    call,
)
from agentmonitors.diagnosis.agent_text import shell_arg
from agentmonitors.diagnosis.agent_verbs import METHODS, AgentViewError, answer
from agentmonitors.diagnosis.doctor_store import open_read_only
from agentmonitors.paths import resolve_db_path
from agentmonitors.store.database import Database, StoreError
from agentmonitors.workspace import resolve_workspace

if TYPE_CHECKING:
    from agentmonitors.cli.output import OutputFormat

Render = Callable[[Mapping[str, Any]], str]


def _in_process(verb: str, params: dict[str, Any], workspace: str) -> dict[str, Any]:
    """The answer from the database, opened read-only; ``AgentViewError`` when none."""
    db_path = resolve_db_path(workspace)
    db = open_read_only(db_path)
    if db is None and verb == "inspect":
        # No database yet is no session yet: the answer is the empty one, as it is once
        # the daemon has made the file and no session has opened.
        db = Database(":memory:")
    if db is None:
        raise AgentViewError(
            f"Nothing is stored for {workspace} yet (no database at {db_path}): no monitor"
            " has reported a change. Start the daemon with `agentmonitors daemon run`, or"
            " run `agentmonitors doctor`."
        )
    with db:
        return answer(db, verb, params, workspace=workspace, now_ms=time.time_ns() // 1_000_000)


def run_verb(
    verb: str,
    params: dict[str, Any],
    *,
    workspace: str | None,
    socket: str | None,
    output_format: str | None,
    render: Render,
) -> int:
    """Ask the daemon, or read the store when none answers; print; 0 or 1."""
    fmt: OutputFormat = resolve_format(output_format)
    as_json = fmt == "json"
    workspace_path = resolve_workspace(workspace)
    socket_path = manual_socket(socket, workspace_path)
    request = {"workspacePath": workspace_path, **params}
    try:
        result = call(socket_path, METHODS[verb], request)
    except (DaemonConnectionError, DaemonUnsupportedError):
        try:
            result = _in_process(verb, request, workspace_path)
        except (AgentViewError, StoreError) as error:
            return report_error(str(error), as_json)
    except DaemonError as error:
        return report_error(str(error), as_json)
    if "objectKeys" in result and "error" in result:
        return _ambiguous(result, fmt, repeat_flags(workspace=workspace, socket=socket))
    emit(result, fmt, lambda: render(result))
    return 0


def repeat_flags(**values: str | None) -> str:
    """The options given, as they would be typed again in a suggested command."""
    return "".join(
        f" --{name.replace('_', '-')} {shlex.quote(value)}"
        for name, value in values.items()
        if value is not None
    )


def _ambiguous(result: Mapping[str, Any], fmt: OutputFormat, flags: str) -> int:
    """Several objects and none named: list the keys, never guess; exit 1."""
    if fmt == "json":
        emit(result, fmt, str)
        return print_error(result["error"])
    keys = [f"  {key}" for key in result["objectKeys"]]
    more = result.get("moreObjectKeys") or 0
    if more:
        command = f"agentmonitors summary {shell_arg(result['monitorId'])}{flags} --all"
        keys.append(f"  … and {more} more; `{command}` lists every object")
    # The keys to choose from are the answer (stdout); the reason is the one stderr line.
    echo("\n".join(keys))
    return print_error(result["error"])


session_option = click.option(
    "--session",
    "session_id",
    help="AgentMon session id: answer for this session (its baseline, its counts); required"
    " for its ephemeral monitors.",
    shell_complete=complete_session_id,
)
OBJECT_HELP = (
    "Object key: a watched file's path (absolute, or relative to this folder or to the"
    " project), a URL, a ref, as `summary` lists them."
)
monitor_argument = click.argument("monitor_id", shell_complete=complete_monitor_id)
formats_option = format_option(("toon", "json", "text"), None)


def limit_option(what: str, default: int) -> Callable[[Any], Any]:
    return click.option(
        "--limit",
        type=click.IntRange(min=1),
        help=f"List at most this many {what} (default: {default}); the answer says how many"
        " it left out.",
    )


def all_option(what: str) -> Callable[[Any], Any]:
    return click.option("--all", "show_all", is_flag=True, help=f"List all {what}.")


def listing_params(limit: int | None, show_all: bool) -> dict[str, Any]:
    if limit is not None and show_all:
        raise click.UsageError("--limit and --all cannot be used together.")
    if show_all:
        return {"all": True}
    return {} if limit is None else {"limit": limit}


def request_params(**values: str | None) -> dict[str, Any]:
    found = {key: value for key, value in values.items() if value is not None}
    if "objectKey" in found:
        # A relative --object is read from where the user stands, then from the project.
        found["cwd"] = os.getcwd()
    return found

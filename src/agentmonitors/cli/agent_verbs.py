"""``snapshot``, ``diff``, ``summary``, ``inspect``: what an agent asks after a change.

Read-only and immediate: the daemon answers when it runs (with its clock and its
in-flight deliveries); otherwise the workspace database is read, opened read-only.
Neither path observes a source, claims, acknowledges or moves a cursor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

from agentmonitors.cli.completion import complete_monitor_id, complete_session_id
from agentmonitors.cli.output import (
    echo,
    emit,
    format_option,
    print_error,
    report_error,
    resolve_format,
)

if TYPE_CHECKING:
    from agentmonitors.cli.output import OutputFormat

Render = Callable[[Mapping[str, Any]], str]


def _in_process(verb: str, params: dict[str, Any], workspace: str) -> dict[str, Any]:
    """The answer from the database, opened read-only; ``AgentViewError`` when none."""
    import time

    from agentmonitors.diagnosis.agent_verbs import AgentViewError, answer
    from agentmonitors.diagnosis.doctor_store import open_read_only
    from agentmonitors.paths import resolve_db_path

    db_path = resolve_db_path(workspace)
    db = open_read_only(db_path)
    if db is None and verb == "inspect":
        from agentmonitors.store.database import Database

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
    from agentmonitors.cli.daemon_calls import manual_socket
    from agentmonitors.daemon.client import (
        DaemonConnectionError,
        DaemonError,
        DaemonUnsupportedError,
        call,
    )
    from agentmonitors.diagnosis.agent_verbs import METHODS, AgentViewError
    from agentmonitors.store.database import StoreError
    from agentmonitors.workspace import resolve_workspace

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
        return _ambiguous(result, fmt, _flags(workspace=workspace, socket=socket))
    emit(result, fmt, lambda: render(result))
    return 0


def _flags(**values: str | None) -> str:
    """The options given, as they would be typed again in a suggested command."""
    import shlex

    return "".join(
        f" --{name.replace('_', '-')} {shlex.quote(value)}"
        for name, value in values.items()
        if value is not None
    )


def _ambiguous(result: Mapping[str, Any], fmt: OutputFormat, flags: str) -> int:
    """Several objects and none named: list the keys, never guess; exit 1."""
    from agentmonitors.diagnosis.agent_text import shell_arg

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


_workspace = click.option("--workspace", help="Project directory (default: the current project).")
_socket = click.option("--socket", help="Unix socket of the daemon.")
_session = click.option(
    "--session",
    "session_id",
    help="AgentMon session id: answer for this session (its baseline, its counts); required"
    " for its ephemeral monitors.",
    shell_complete=complete_session_id,
)
_OBJECT_HELP = (
    "Object key: a watched file's path (absolute, or relative to this folder or to the"
    " project), a URL, a ref, as `summary` lists them."
)
_monitor = click.argument("monitor_id", shell_complete=complete_monitor_id)
_formats = format_option(("toon", "json", "text"), None)


def _limit(what: str, default: int) -> Callable[[Any], Any]:
    return click.option(
        "--limit",
        type=click.IntRange(min=1),
        help=f"List at most this many {what} (default: {default}); the answer says how many"
        " it left out.",
    )


def _all(what: str) -> Callable[[Any], Any]:
    return click.option("--all", "show_all", is_flag=True, help=f"List all {what}.")


def _listing(limit: int | None, show_all: bool) -> dict[str, Any]:
    if limit is not None and show_all:
        raise click.UsageError("--limit and --all cannot be used together.")
    if show_all:
        return {"all": True}
    return {} if limit is None else {"limit": limit}


def _params(**values: str | None) -> dict[str, Any]:
    found = {key: value for key, value in values.items() if value is not None}
    if "objectKey" in found:
        import os

        # A relative --object is read from where the user stands, then from the project.
        found["cwd"] = os.getcwd()
    return found


@click.command(
    "snapshot",
    help="The latest stored snapshot of one watched object, as the daemon last saw it (no"
    " refetch, nothing marked read). --object may be left out when the monitor watches one"
    " object.",
)
@_monitor
@click.option("--object", "object_key", help=_OBJECT_HELP)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    help="Start at this character: a long snapshot is shown in parts of 16,000 characters,"
    " each naming the offset of the next.",
)
@_session
@_workspace
@_socket
@_formats
def snapshot(
    monitor_id: str,
    object_key: str | None,
    offset: int,
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    output_format: str | None,
) -> int:
    from agentmonitors.diagnosis.agent_text import render_snapshot

    params = _params(monitorId=monitor_id, objectKey=object_key, sessionId=session_id)
    if offset:
        params["offset"] = offset
    flags = _flags(session=session_id, workspace=workspace, socket=socket)
    return run_verb(
        "snapshot",
        params,
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda result: render_snapshot(result, flags),
    )


@click.command(
    "diff",
    help="What changed in one object between two stored points, diffed as deliveries are."
    " A point is an event id or an ISO-8601 time; --from defaults to what the session was"
    " last shown (without --session: the snapshot before --to), --to to the latest.",
)
@_monitor
@click.option("--object", "object_key", required=True, help=_OBJECT_HELP)
@click.option("--from", "from_point", help="Event id or ISO-8601 time to diff from.")
@click.option("--to", "to_point", help="Event id or ISO-8601 time to diff to.")
@click.option(
    "--all",
    "whole",
    is_flag=True,
    help="Every change: a diff is otherwise cut as deliveries cut it (20 changed lines),"
    " with a line saying how many it left out.",
)
@_session
@_workspace
@_socket
@_formats
def diff(
    monitor_id: str,
    object_key: str,
    from_point: str | None,
    to_point: str | None,
    whole: bool,
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    output_format: str | None,
) -> int:
    from agentmonitors.diagnosis.agent_text import render_diff

    params = _params(
        monitorId=monitor_id,
        objectKey=object_key,
        sessionId=session_id,
        **{"from": from_point, "to": to_point},
    )
    if whole:
        params["all"] = True
    return run_verb(
        "diff",
        params,
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=render_diff,
    )


@click.command(
    "summary",
    help="One line per object of a monitor: urgency, kind of change, title, event counts"
    " (unread and claimed with --session). No snapshot, no diff.",
)
@_monitor
@click.option("--object", "object_key", help="Only this object. " + _OBJECT_HELP)
@_session
@_workspace
@_socket
@_limit("objects", 20)
@_all("objects")
@_formats
def summary(
    monitor_id: str,
    object_key: str | None,
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    limit: int | None,
    show_all: bool,
    output_format: str | None,
) -> int:
    from agentmonitors.diagnosis.agent_text import render_summary

    params = _params(monitorId=monitor_id, objectKey=object_key, sessionId=session_id)
    params.update(_listing(limit, show_all))
    flags = _flags(session=session_id, workspace=workspace, socket=socket)
    return run_verb(
        "summary",
        params,
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda result: render_summary(result, flags),
    )


@click.command(
    "inspect",
    help="A session's changes in three buckets: received (shown or acknowledged), pending"
    " (deliverable at the next delivery point) and armed (detected but held, with the hold"
    " and the earliest time it can fire). Without --session: every active session here.",
)
@_session
@_workspace
@_socket
@_limit("events in each list (received: 10)", 20)
@_all("events and keys")
@_formats
def inspect(
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    limit: int | None,
    show_all: bool,
    output_format: str | None,
) -> int:
    from agentmonitors.diagnosis.agent_text import render_inspect

    flags = _flags(workspace=workspace, socket=socket)
    return run_verb(
        "inspect",
        {**_params(sessionId=session_id), **_listing(limit, show_all)},
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda report: render_inspect(report, flags),
    )

"""``agentmonitors snapshot``: the latest stored snapshot of one watched object."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.read_only_query import (
    OBJECT_HELP,
    formats_option,
    monitor_argument,
    repeat_flags,
    request_params,
    run_verb,
    session_option,
)
from agentmonitors.diagnosis.agent_text import render_snapshot


@click.command(
    "snapshot",
    help="The latest stored snapshot of one watched object, as the daemon last saw it (no"
    " refetch, nothing marked read). --object may be left out when the monitor watches one"
    " object.",
)
@monitor_argument
@click.option("--object", "object_key", help=OBJECT_HELP)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    help="Start at this character: a long snapshot is shown in parts of 16,000 characters,"
    " each naming the offset of the next.",
)
@session_option
@workspace_option
@socket_option
@formats_option
def snapshot(
    monitor_id: str,
    object_key: str | None,
    offset: int,
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    output_format: str | None,
) -> int:
    params = request_params(monitorId=monitor_id, objectKey=object_key, sessionId=session_id)
    if offset:
        params["offset"] = offset
    flags = repeat_flags(session=session_id, workspace=workspace, socket=socket)
    return run_verb(
        "snapshot",
        params,
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda result: render_snapshot(result, flags),
    )

"""``agentmonitors diff``: a watched object's change between two stored points."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.read_only_query import (
    OBJECT_HELP,
    formats_option,
    monitor_argument,
    request_params,
    run_verb,
    session_option,
)
from agentmonitors.diagnosis.agent_text import render_diff


@click.command(
    "diff",
    help="What changed in one object between two stored points, diffed as deliveries are."
    " A point is an event id or an ISO-8601 time; --from defaults to what the session was"
    " last shown (without --session: the snapshot before --to), --to to the latest.",
)
@monitor_argument
@click.option("--object", "object_key", required=True, help=OBJECT_HELP)
@click.option("--from", "from_point", help="Event id or ISO-8601 time to diff from.")
@click.option("--to", "to_point", help="Event id or ISO-8601 time to diff to.")
@click.option(
    "--all",
    "whole",
    is_flag=True,
    help="Every change: a diff is otherwise cut as deliveries cut it (20 changed lines),"
    " with a line saying how many it left out.",
)
@session_option
@workspace_option
@socket_option
@formats_option
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
    params = request_params(
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

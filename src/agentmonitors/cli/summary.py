"""``agentmonitors summary``: a monitor's objects at a glance."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.read_only_query import (
    OBJECT_HELP,
    all_option,
    formats_option,
    limit_option,
    listing_params,
    monitor_argument,
    repeat_flags,
    request_params,
    run_verb,
    session_option,
)
from agentmonitors.diagnosis.agent_text import render_summary


@click.command(
    "summary",
    help="One line per object of a monitor: urgency, kind of change, title, event counts"
    " (unread and claimed with --session). No snapshot, no diff.",
)
@monitor_argument
@click.option("--object", "object_key", help="Only this object. " + OBJECT_HELP)
@session_option
@workspace_option
@socket_option
@limit_option("objects", 20)
@all_option("objects")
@formats_option
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
    params = request_params(monitorId=monitor_id, objectKey=object_key, sessionId=session_id)
    params.update(listing_params(limit, show_all))
    flags = repeat_flags(session=session_id, workspace=workspace, socket=socket)
    return run_verb(
        "summary",
        params,
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda result: render_summary(result, flags),
    )

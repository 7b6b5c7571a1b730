"""``agentmonitors inspect``: a session's changes, received, pending and armed."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.read_only_query import (
    all_option,
    formats_option,
    limit_option,
    listing_params,
    repeat_flags,
    request_params,
    run_verb,
    session_option,
)
from agentmonitors.diagnosis.agent_text import render_inspect


@click.command(
    "inspect",
    help="A session's changes in three buckets: received (shown or acknowledged), pending"
    " (deliverable at the next delivery point) and armed (detected but held, with the hold"
    " and the earliest time it can fire). Without --session: every active session here.",
)
@session_option
@workspace_option
@socket_option
@limit_option("events in each list (received: 10)", 20)
@all_option("events and keys")
@formats_option
def inspect(
    session_id: str | None,
    workspace: str | None,
    socket: str | None,
    limit: int | None,
    show_all: bool,
    output_format: str | None,
) -> int:
    flags = repeat_flags(workspace=workspace, socket=socket)
    return run_verb(
        "inspect",
        {**request_params(sessionId=session_id), **listing_params(limit, show_all)},
        workspace=workspace,
        socket=socket,
        output_format=output_format,
        render=lambda report: render_inspect(report, flags),
    )

"""``agentmonitors daemon stop``: ask the workspace's daemon to stop."""

from __future__ import annotations

import time

import click

from agentmonitors.cli.common_options import socket_option, workspace_option
from agentmonitors.cli.daemon_calls import no_daemon_text, unreachable_text
from agentmonitors.cli.output import format_option, print_document, report_error
from agentmonitors.daemon.client import (
    DaemonConnectionError,
    DaemonError,
    DaemonRefusedError,
    call,
    ping,
)
from agentmonitors.daemon.protocol import REQUEST_TIMEOUT_S
from agentmonitors.paths import resolve_socket_path
from agentmonitors.workspace import resolve_workspace


@click.command("stop", help="Ask the workspace's daemon to stop.")
@socket_option
@workspace_option
@format_option(("text", "json", "toon"), "text")
def stop(socket: str | None, workspace: str | None, output_format: str) -> int:
    as_json = output_format == "json"
    socket_path = resolve_socket_path(resolve_workspace(workspace), socket)
    try:
        answer = call(socket_path, "stop", {})
    except DaemonConnectionError as error:
        if isinstance(error, DaemonRefusedError):
            said = error.message
        elif error.timed_out:
            said = unreachable_text(socket_path, "stop", REQUEST_TIMEOUT_S)
        else:
            said = no_daemon_text(workspace)
        click.echo(f"error: {said}", err=True)
        print_document({"stopped": False, "pid": None, "socketPath": socket_path}, output_format)
        return 1
    except DaemonError as error:
        return report_error(str(error), as_json)
    pid = answer.get("pid") if isinstance(answer, dict) else None
    if not print_document({"stopped": True, "pid": pid, "socketPath": socket_path}, output_format):
        click.echo("AgentMon daemon stopping.")
    # Wait briefly so a following `daemon start` does not race the old process.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and ping(socket_path, timeout_s=0.2):
        time.sleep(0.05)
    return 0

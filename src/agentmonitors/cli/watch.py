"""``agentmonitors watch``: declare, list and cancel a session's own watches.

``watch <source> …`` is ``watch declare <source> …``. The daemon checks and stores a
declaration; this command only parses ``--scope`` and prints the record.
"""

from __future__ import annotations

import json
from typing import Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import format_option, print_document, report_error, warn
from agentmonitors.untrusted import clean_line


class ScopeError(ValueError):
    pass


def parse_scope(spec: str) -> dict[str, Any]:
    """``--scope``: a JSON object when it starts with ``{``, else ``key=value,…`` strings.

    Purely syntactic: whether the keys make sense is the source's validator's call.
    """
    text = spec.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise ScopeError(f"--scope is not valid JSON: {error}") from None
        if not isinstance(value, dict):
            raise ScopeError("--scope JSON must be an object")
        return value
    scope: dict[str, Any] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        key, equals, value = entry.partition("=")
        if not equals:
            raise ScopeError(f'--scope entry "{entry}" is not a key=value pair (or a JSON object)')
        scope[key.strip()] = value
    return scope


class _DeclareByDefault(click.Group):
    """A group whose first argument, when not a subcommand, starts a ``declare``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["declare", *args]
        return super().parse_args(ctx, args)


@click.group(
    "watch",
    cls=_DeclareByDefault,
    help="Watches an agent declares for its own session (watch <source> = watch declare).",
)
def command() -> None:
    pass


_SESSION = click.option(
    "--session",
    "session_id",
    required=True,
    shell_complete=complete_session_id,
    help="The declaring AgentMon session id.",
)


@command.command("declare", help="Watch something for this session until it ends or cancels.")
@click.argument("source")
@_SESSION
@click.option("--scope", required=True, help="Source config: key=value,… or a JSON object.")
@click.option("--urgency", help='A level or a band such as "normal..high" (default: normal).')
@click.option("--instruction", help="What to do when it fires; delivered with the event.")
@click.option("--display-name", help="The name events of this watch are titled with.")
@socket_option
@format_option(("text", "json", "toon"), "text")
def declare(
    source: str,
    session_id: str,
    scope: str,
    urgency: str | None,
    instruction: str | None,
    display_name: str | None,
    socket: str | None,
    output_format: str,
) -> int:
    as_json = output_format == "json"
    try:
        parsed = parse_scope(scope)
    except ScopeError as error:
        return report_error(str(error), as_json)
    request: dict[str, Any] = {"sessionId": session_id, "source": source, "scope": parsed}
    for key, value in (
        ("urgency", urgency),
        ("instruction", instruction),
        ("displayName", display_name),
    ):
        if value is not None:
            request[key] = value
    try:
        record = ask(manual_socket(socket), "watch.declare", request, as_json=as_json)
    except DaemonCallFailed:
        return 1
    if not print_document(record, output_format):
        for warning in record.get("warnings", ()):
            warn(warning)
        click.echo(f"Declared ephemeral monitor: {record['id']}")
        click.echo(f"Source: {record['sourceName']}")
        click.echo(f"Urgency: {_band(record)}")
        if record.get("awaitingApproval"):
            click.echo(clean_line(f"Waiting for approval: {record['awaitingApproval']}"))
    return 0


def _band(record: dict[str, Any]) -> str:
    low, high = record.get("urgency"), record.get("urgencyMax", record.get("urgency"))
    return str(low) if low == high else f"{low}..{high}"


@command.command("list", help="The session's active watches, oldest first.")
@_SESSION
@socket_option
@format_option(("text", "json", "toon"), "text")
def list_(session_id: str, socket: str | None, output_format: str) -> int:
    as_json = output_format == "json"
    try:
        records = ask(
            manual_socket(socket), "watch.list", {"sessionId": session_id}, as_json=as_json
        )
    except DaemonCallFailed:
        return 1
    if print_document(records, output_format):
        pass
    elif not records:
        click.echo("No ephemeral monitors found.")
    else:
        for record in records:
            click.echo(
                f"{record['id']}  {record['sourceName']}  {_band(record)}  {record['status']}"
            )
    return 0


list_.name = "list"


@command.command("cancel", help="Stop one of the session's watches now.")
@click.argument("ephemeral_id")
@_SESSION
@socket_option
@format_option(("text", "json", "toon"), "text")
def cancel(ephemeral_id: str, session_id: str, socket: str | None, output_format: str) -> int:
    as_json = output_format == "json"
    try:
        record = ask(
            manual_socket(socket),
            "watch.cancel",
            {"sessionId": session_id, "ephemeralId": ephemeral_id},
            as_json=as_json,
        )
    except DaemonCallFailed:
        return 1
    if not print_document(record, output_format):
        click.echo(f"Cancelled ephemeral monitor: {record['id']}")
    return 0

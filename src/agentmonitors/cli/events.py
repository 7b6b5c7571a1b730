"""``agentmonitors events``: list a session's events and acknowledge them."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.agent_commands import (
    DEFAULT_LIST_LIMIT,
    UsageProblem,
    ack_text,
    events_ack,
    events_list,
    events_text,
    listed_page,
    more_line,
    scope_pairs,
    split_ids,
)
from agentmonitors.cli.completion import complete_monitor_id, complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT
from agentmonitors.cli.output import format_option

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "ack_text",
    "command",
    "events_text",
    "listed_page",
    "more_line",
    "parse_scope",
    "split_ids",
]


class _MissingSession(click.MissingParameter):
    """A missing ``--session`` says where to find one."""

    def format_message(self) -> str:
        return f"{super().format_message()}\n{SESSION_HINT}"


class SessionOption(click.Option):
    """``--session``: required, and its absence points at ``session list``."""

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        try:
            return super().process_value(ctx, value)
        except click.MissingParameter as error:
            raise _MissingSession(ctx=ctx, param=self) from error


session_option = click.option(
    "--session",
    "session_id",
    cls=SessionOption,
    required=True,
    help="AgentMon session id. " + SESSION_HINT,
    shell_complete=complete_session_id,
)


@click.group("events", help="A session's events: list them, acknowledge them.")
def command() -> None:
    pass


def parse_scope(raw: str | None) -> dict[str, str] | None:
    """``key=value,key2=value2``; anything else is a usage error naming ``--scope``."""
    if raw is None:
        return None
    try:
        return scope_pairs(raw)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--scope'") from error


def _scope_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    del ctx, param
    return parse_scope(value)


@command.command(
    "list",
    help=f"A session's events, newest first: at most {DEFAULT_LIST_LIMIT} in toon and text "
    "unless --limit or --all says otherwise.",
)
@session_option
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--monitor", help="Only this monitor's events.", shell_complete=complete_monitor_id)
@click.option(
    "--urgency", type=click.Choice(["low", "normal", "high"]), help="Only events of this urgency."
)
@click.option("--tag", "tags", multiple=True, help="Only events with this tag (repeatable).")
@click.option(
    "--scope",
    callback=_scope_callback,
    help="Only events whose scope matches: key=value,key2=value2 (e.g. filePath=docs/a.md).",
)
@click.option(
    "--unread",
    is_flag=True,
    help="Only events not acknowledged yet: deliveryState unread (never shown) or claimed"
    " (shown, not acknowledged).",
)
@click.option("--since-baseline", is_flag=True, help="Only events since the session began.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help=f"Show at most this many events (default: {DEFAULT_LIST_LIMIT} in toon and text, "
    "all in json).",
)
@click.option("--all", "show_all", is_flag=True, help="Show every matching event.")
@format_option(("toon", "json", "text"), None)
def list_(**options: Any) -> int:
    try:
        return events_list(options)
    except UsageProblem as problem:
        raise click.UsageError(str(problem)) from problem


list_.name = "list"


@command.command("ack", help="Acknowledge events (all unread when --event-ids is omitted).")
@session_option
@click.option("--socket", help="Unix socket of the daemon.")
@click.option(
    "--event-ids",
    help="Comma-separated ids; omit to acknowledge every unread event except rows an "
    "in-flight delivery is holding.",
)
@format_option(("text", "json", "toon"), "text")
def ack(**options: Any) -> int:
    return events_ack(options)


@command.command(
    "follow",
    help="Print one line per delivery for a session, live, until stopped: meant for Claude "
    "Code's Monitor tool (each line becomes a turn while the session is idle). Diagnostics go "
    "to stderr.",
)
@session_option
@click.option("--socket", help="Unix socket of the daemon.")
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=25 * 60,
    show_default=True,
    help="Stop after this long with a line asking to be started again (the Monitor tool "
    "stops commands after 30 minutes).",
)
@format_option(("text", "json"), "text")
def follow(**options: Any) -> int:
    from agentmonitors.cli.daemon_calls import manual_socket
    from agentmonitors.transports.follow import run_follow

    return run_follow(
        options["session_id"],
        manual_socket(options.get("socket")),
        max_seconds=options["max_seconds"],
        fmt=options["output_format"],
    )

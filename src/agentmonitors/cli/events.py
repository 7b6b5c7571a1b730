"""``agentmonitors events``: list a session's events and acknowledge them."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.completion import complete_monitor_id, complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT, DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import (
    dump_json,
    emit,
    format_option,
    report_error,
    resolve_format,
    text_table,
)


class _MissingSession(click.MissingParameter):
    """A missing ``--session`` says where to find one (spec 05 §2.1)."""

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


# Newest first, so the default page is the most recent activity.
DEFAULT_LIST_LIMIT = 50


@click.group("events", help="A session's events: list them, acknowledge them.")
def command() -> None:
    pass


def single_line(text: str) -> str:
    """Untrusted text on one terminal line: breaks become spaces, controls are escaped."""
    out = []
    for char in text:
        code = ord(char)
        if char in "\r\n\u2028\u2029":
            out.append(" ")
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def events_text(records: list[dict[str, Any]]) -> str:
    if not records:
        return "No events found."
    rows = []
    for record in records:
        summary = record.get("summary") or ""
        detail = f"  {single_line(summary)}" if summary and summary != record["title"] else ""
        rows.append(
            (
                record["id"],
                single_line(record["monitorId"]),
                record["urgency"],
                record.get("deliveryState", "unread"),
                single_line(record["title"]) + detail,
            )
        )
    return text_table(("ID", "Monitor", "Urgency", "State", "Title"), rows)


def parse_scope(raw: str | None) -> dict[str, str] | None:
    """``key=value,key2=value2``; anything else is a usage error naming ``--scope``."""
    if raw is None:
        return None
    scope = {}
    for segment in raw.split(","):
        key, sep, value = segment.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise click.BadParameter(
                f"expected key=value pairs separated by commas, e.g. filePath=docs/a.md "
                f"(got {segment.strip()!r})",
                param_hint="'--scope'",
            )
        scope[key.strip()] = value.strip()
    return scope


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
@click.option("--unread", is_flag=True, help="Only unacknowledged events (claimed included).")
@click.option("--since-baseline", is_flag=True, help="Only events since the session began.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help=f"Show at most this many events (default: {DEFAULT_LIST_LIMIT} in toon and text, "
    "all in json).",
)
@click.option("--all", "show_all", is_flag=True, help="Show every matching event.")
@format_option(("toon", "json", "text"), None)
def list_(
    session_id: str,
    socket: str | None,
    monitor: str | None,
    urgency: str | None,
    tags: tuple[str, ...],
    scope: dict[str, str] | None,
    unread: bool,
    since_baseline: bool,
    limit: int | None,
    show_all: bool,
    output_format: str | None,
) -> int:
    fmt = resolve_format(output_format)
    if limit is not None and show_all:
        raise click.UsageError("--limit and --all cannot be used together.")
    cap = None if show_all else limit
    if cap is None and not show_all and fmt != "json":
        # What an agent reads is bounded: a backlog of thousands of events would
        # otherwise land in its context whole. Scripts asking for JSON get everything.
        cap = DEFAULT_LIST_LIMIT
    params: dict[str, Any] = {"sessionId": session_id}
    if cap is not None:
        params["limit"] = cap
    if monitor:
        params["monitorId"] = monitor
    if urgency:
        params["urgency"] = urgency
    if tags:
        params["tags"] = list(tags)
    if scope:
        params["scope"] = scope
    if unread:
        params["unreadOnly"] = True
    if since_baseline:
        params["sinceBaseline"] = True
    try:
        reply = ask(manual_socket(socket), "events.list", params, as_json=fmt == "json")
    except DaemonCallFailed:
        return 1
    records, total = listed_page(reply, cap)
    emit(records, fmt, lambda: events_text(records))
    if fmt != "json" and total > len(records):
        click.echo(more_line(total - len(records)))
    return 0


def listed_page(reply: Any, cap: int | None) -> tuple[list[dict[str, Any]], int]:
    """The records to show and how many matched in all.

    A daemon that predates ``limit`` answers the whole array; it is cut here.
    """
    if isinstance(reply, dict) and isinstance(reply.get("events"), list):
        records: list[dict[str, Any]] = reply["events"]
        total = reply.get("total")
        return records, total if isinstance(total, int) else len(records)
    everything: list[dict[str, Any]] = list(reply or [])
    return (everything if cap is None else everything[:cap]), len(everything)


def more_line(count: int) -> str:
    """The closing line of a listing that left older events out."""
    return f"{count} more; use --limit/--all"


list_.name = "list"


def split_ids(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


@command.command("ack", help="Acknowledge events (all unread when --event-ids is omitted).")
@session_option
@click.option("--socket", help="Unix socket of the daemon.")
@click.option(
    "--event-ids",
    help="Comma-separated ids; omit to acknowledge every unread event except rows an "
    "in-flight delivery is holding.",
)
@format_option(("json", "text"), "text")
def ack(
    session_id: str, socket: str | None, event_ids: str | None, output_format: str | None
) -> int:
    as_json = output_format == "json"
    params: dict[str, Any] = {"sessionId": session_id}
    if event_ids is not None:
        params["eventIds"] = split_ids(event_ids)
    try:
        result = ask(manual_socket(socket), "events.ack", params, as_json=as_json)
    except DaemonCallFailed:
        return 1
    reply: dict[str, Any] = result if isinstance(result, dict) else {"ok": True}
    unknown = reply.get("unknownEventIds")
    if as_json:
        click.echo(dump_json(reply))
        return 1 if unknown else 0
    if unknown:
        return report_error(
            f"no such event for session {session_id}: {', '.join(unknown)} (the others, if any, "
            f"were acknowledged). See `agentmonitors events list --session {session_id}`; "
            + SESSION_HINT,
            False,
        )
    click.echo(ack_text(reply))
    return 0


def _events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"


def ack_text(reply: dict[str, Any]) -> str:
    """What was acknowledged, and what an in-flight delivery kept unread."""
    acknowledged = reply.get("acknowledged")
    if not isinstance(acknowledged, int):  # a daemon that predates the counts
        return "Acknowledged events."
    lines = [f"Acknowledged {_events(acknowledged)}."]
    held = reply.get("heldByDelivery")
    if isinstance(held, int) and held:
        them, stays = ("it", "stays") if held == 1 else ("them", "stay")
        lines.append(
            f"{_events(held)} {stays} unread: a delivery in flight holds {them}. Acknowledge "
            f"{them} by id once shown, or run this again after 30 s."
        )
    return "\n".join(lines)

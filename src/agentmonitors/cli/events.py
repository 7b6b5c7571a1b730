"""``agentmonitors events``: list a session's events and acknowledge them."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.daemon_calls import SESSION_HINT, DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import emit, format_option, report_error, resolve_format


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
    lines = []
    for record in records:
        summary = record.get("summary") or ""
        detail = f"  {single_line(summary)}" if summary and summary != record["title"] else ""
        lines.append(
            f"{record['id']}  {single_line(record['monitorId'])}  {record['urgency']}  "
            f"{record.get('deliveryState', 'unread')}  {single_line(record['title'])}{detail}"
        )
    return "\n".join(lines)


def parse_scope(raw: str | None) -> dict[str, str] | None:
    if not raw:
        return None
    scope = {}
    for segment in raw.split(","):
        key, _, value = segment.partition("=")
        if key.strip() and value.strip():
            scope[key.strip()] = value.strip()
    return scope or None


@command.command("list", help="A session's events, newest first.")
@click.option("--session", "session_id", required=True, help="AgentMon session id. " + SESSION_HINT)
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--monitor", help="Only this monitor's events.")
@click.option("--urgency", type=click.Choice(["low", "normal", "high"]))
@click.option("--tag", "tags", multiple=True, help="Only events with this tag (repeatable).")
@click.option("--scope", help="Scope filters: key=value,key2=value2.")
@click.option("--unread", is_flag=True, help="Only unacknowledged events (claimed included).")
@click.option("--since-baseline", is_flag=True, help="Only events since the session began.")
@format_option(("toon", "json", "text"), None)
def list_(
    session_id: str,
    socket: str | None,
    monitor: str | None,
    urgency: str | None,
    tags: tuple[str, ...],
    scope: str | None,
    unread: bool,
    since_baseline: bool,
    output_format: str | None,
) -> int:
    fmt = resolve_format(output_format)
    params: dict[str, Any] = {"sessionId": session_id}
    if monitor:
        params["monitorId"] = monitor
    if urgency:
        params["urgency"] = urgency
    if tags:
        params["tags"] = list(tags)
    scope_filter = parse_scope(scope)
    if scope_filter:
        params["scope"] = scope_filter
    if unread:
        params["unreadOnly"] = True
    if since_baseline:
        params["sinceBaseline"] = True
    try:
        records = ask(manual_socket(socket), "events.list", params, as_json=fmt == "json")
    except DaemonCallFailed:
        return 1
    emit(records, fmt, lambda: events_text(records))
    return 0


list_.name = "list"


def split_ids(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


@command.command("ack", help="Acknowledge events (all unread when --event-ids is omitted).")
@click.option("--session", "session_id", required=True, help="AgentMon session id. " + SESSION_HINT)
@click.option("--socket", help="Unix socket of the daemon.")
@click.option(
    "--event-ids",
    help="Comma-separated ids; omit to acknowledge every unread event except rows an "
    "in-flight delivery is holding.",
)
def ack(session_id: str, socket: str | None, event_ids: str | None) -> int:
    params: dict[str, Any] = {"sessionId": session_id}
    if event_ids is not None:
        params["eventIds"] = split_ids(event_ids)
    try:
        result = ask(manual_socket(socket), "events.ack", params)
    except DaemonCallFailed:
        return 1
    unknown = result.get("unknownEventIds") if isinstance(result, dict) else None
    if unknown:
        return report_error(
            f"no such event for session {session_id}: {', '.join(unknown)} (the others, if any, "
            f"were acknowledged). See `agentmonitors events list --session {session_id}`; "
            + SESSION_HINT,
            False,
        )
    click.echo("Acknowledged events.")
    return 0

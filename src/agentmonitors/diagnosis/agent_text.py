"""Text renderings of the agent's verbs (``--format text``); JSON and TOON print the data."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from agentmonitors.delivery.text import diff_elided
from agentmonitors.untrusted import clean_block, clean_line


def shell_arg(value: Any) -> str:
    """A value of ours or of a store (a monitor id, an object key) as one shell word, for a
    command a message suggests; shown on one line."""
    return shlex.quote(_line(value))


def _line(value: Any) -> str:
    """A field from the store (a title, a name, an object key) on its one line."""
    return clean_line("" if value is None else str(value))


def _point(point: Mapping[str, Any]) -> str:
    kind = point.get("kind")
    where = f"event {point.get('eventId')}" if point.get("eventId") else "no event"
    if point.get("baseline"):
        where = "the baseline"
    at = point.get("capturedAt")
    label = {
        "latest": "latest",
        "previous": "previous snapshot",
        "session-baseline": "what this session last saw (shown or acknowledged)",
        "event": "event",
        "time": f"at or before {point.get('point')}",
    }.get(str(kind), str(kind))
    if kind == "event":
        return f"{where} ({at})"
    return f"{label} ({where}, {at})"


def render_snapshot(result: Mapping[str, Any], flags: str = "") -> str:
    """``flags`` are the options the command was run with (``--session``, ``--workspace``,
    ``--socket``), repeated in the command that shows the next part of a cut snapshot."""
    head = (
        f"{_line(result['monitorId'])} · {_line(result['objectKey'])} · {_origin(result)}"
        f" · captured {result['capturedAt']}"
    )
    text = clean_block(str(result["content"]))
    if not result.get("truncated"):
        return head + "\n\n" + text
    start = int(result.get("offset") or 0)
    end = start + len(result["content"])
    head += f" · characters {start + 1:,}–{end:,} of {result['contentChars']:,}"
    tail = ""
    remaining = result.get("remainingChars")
    next_offset = result.get("nextOffset")
    if next_offset is not None:
        command = (
            f"agentmonitors snapshot {shell_arg(result['monitorId'])} --object"
            f" {shell_arg(result['objectKey'])}{flags} --offset {next_offset}"
        )
        tail = f"\n\n… {remaining:,} more characters; `{command}` shows the next part"
    return head + "\n\n" + text + tail


def _origin(result: Mapping[str, Any]) -> str:
    """Which event a stored version came with, or that it was kept from the baseline."""
    event = result.get("eventId")
    return f"event {event}" if event else "baseline (before any event)"


def render_diff(result: Mapping[str, Any]) -> str:
    head = (
        f"{_line(result['monitorId'])} · {_line(result['objectKey'])}\n"
        f"from {_point(result['from'])}\n"
        f"to   {_point(result['to'])}"
    )
    if not result.get("changed"):
        return head + "\n\nNo difference."
    text = head + "\n\n" + clean_block(str(result["diff"]))
    if not result.get("whole") and diff_elided(str(result["diff"])):
        text += "\n(run again with --all to see every change)"
    return text


def render_summary(result: Mapping[str, Any], flags: str = "") -> str:
    """``flags`` as for :func:`render_snapshot`, repeated in the command listing every object."""
    objects = result.get("objects") or []
    lines = [f"{_line(result['monitorId'])}: {result['objectCount']} object(s) with events"]
    for item in objects:
        counts = (
            f"{item['unread']} unread, {item['claimed']} claimed"
            if item.get("unread") is not None
            else "pass --session for unread/claimed counts"
        )
        kind = f" {item['changeKind']}" if item.get("changeKind") else ""
        lines.append(
            f"- {_line(item['objectKey'])} ({item['urgency']}{kind}): {_line(item['title'])}"
            f" · {item['events']} event(s), {counts} · latest {item['latestEventId']}"
            f" at {item['latestAt']}"
        )
        if item.get("summary") and item["summary"] != item["title"]:
            lines.append(f"  {_line(item['summary'])}")
    if result.get("moreObjects"):
        command = f"agentmonitors summary {shell_arg(result['monitorId'])}{flags} --all"
        lines.append(
            f"… and {result['moreObjects']} more object(s); `{command}` lists them"
            " (--object KEY shows one)"
        )
    return "\n".join(lines)


def _more(count: Any, what: str, command: str) -> str:
    """The closing line of a cut list: how many it left out and the command that lists them."""
    return f"    … and {count} more {what}; `{command}` lists them"


def _armed_line(entry: Mapping[str, Any], command: str) -> str:
    monitors = ", ".join(_line(name) for name in entry.get("monitorIds") or ())
    if "observations" in entry:
        what = f"{entry['observations']} observation(s)"
        keys = [_line(key) for key in entry.get("objectKeys") or []]
        if entry.get("omittedObjectKeys"):
            keys.append(f"… and {entry['omittedObjectKeys']} more, `{command}` lists them")
        if keys:
            what += f" ({', '.join(keys)})"
    else:
        what = f"{entry.get('eventCount', 0)} event(s)"
    fires = entry.get("earliestFireAt")
    when = f"; fires at {fires} at the earliest" if fires else ""
    return f"    {entry['reason']}  {monitors}  {what}{when} — {_line(entry.get('detail', ''))}"


def _how(item: Mapping[str, Any]) -> str:
    """How a received event last reached the session: the lifecycle and the form it took."""
    lifecycle = item.get("lifecycle")
    if not lifecycle:
        return "without being delivered"
    shown = item.get("deliveredAs")
    return f"delivered at {lifecycle}" + (f" ({shown})" if shown else "")


def render_inspect(report: Mapping[str, Any], flags: str = "") -> str:
    """``flags`` are the options that reach the same store (``--workspace``, ``--socket``),
    repeated in the command that lists what a cut list left out."""
    sessions = report.get("sessions") or []
    if not sessions:
        return "No active session in this workspace."
    lines: list[str] = []
    for session in sessions:
        if lines:
            lines.append("")
        lines.append(f"Session {_line(session['sessionId'])} ({session['status']})")
        every = f"agentmonitors inspect --session {shell_arg(session['sessionId'])}{flags} --all"
        received = session["received"]
        lines.append(
            f"  Received: {received['count']} ({received['claimed']} claimed,"
            f" {received['acknowledged']} acknowledged)"
        )
        lines += [
            f"    {item['eventId']}  {_line(item['monitorId'])}  {item['urgency']}  {item['state']}"
            f" {_how(item)}  {_line(item['title'])}"
            for item in received["events"]
        ]
        if received.get("omitted"):
            lines.append(_more(received["omitted"], "received", every))
        pending = session["pending"]
        lines.append(f"  Pending: {pending['count']}")
        lines += [
            f"    {item['eventId']}  {_line(item['monitorId'])}  {item['urgency']}"
            f"  {_line(item['title'])} — {item['deliverAt']}"
            for item in pending["events"]
        ]
        if pending.get("omitted"):
            lines.append(_more(pending["omitted"], "pending", every))
        armed = session["armed"]
        lines.append(f"  Armed: {armed['count']}")
        lines += [_armed_line(entry, every) for entry in armed["entries"]]
    return "\n".join(lines)

"""Text renderings of the agent's verbs (``--format text``); JSON and TOON print the data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.untrusted import clean_block, clean_line


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


def render_snapshot(result: Mapping[str, Any]) -> str:
    head = (
        f"{_line(result['monitorId'])} · {_line(result['objectKey'])} · {_origin(result)}"
        f" · captured {result['capturedAt']}"
    )
    if result.get("truncated"):
        head += f" · first {len(result['content'])} of {result['contentChars']} characters"
    return head + "\n\n" + clean_block(str(result["content"]))


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
    return head + "\n\n" + clean_block(str(result["diff"]))


def render_summary(result: Mapping[str, Any]) -> str:
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
        lines.append(f"… and {result['moreObjects']} more object(s); pass --object for one")
    return "\n".join(lines)


def _armed_line(entry: Mapping[str, Any]) -> str:
    monitors = ", ".join(_line(name) for name in entry.get("monitorIds") or ())
    if "observations" in entry:
        what = f"{entry['observations']} observation(s)"
        keys = entry.get("objectKeys") or []
        if keys:
            what += f" ({', '.join(_line(key) for key in keys)})"
    else:
        what = f"{entry.get('eventCount', 0)} event(s)"
    fires = entry.get("earliestFireAt")
    when = f"; fires at {fires} at the earliest" if fires else ""
    return f"    {entry['reason']}  {monitors}  {what}{when} — {_line(entry.get('detail', ''))}"


def render_inspect(report: Mapping[str, Any]) -> str:
    sessions = report.get("sessions") or []
    if not sessions:
        return "No active session in this workspace."
    lines: list[str] = []
    for session in sessions:
        if lines:
            lines.append("")
        lines.append(f"Session {_line(session['sessionId'])} ({session['status']})")
        received = session["received"]
        lines.append(
            f"  Received: {received['count']} ({received['claimed']} claimed,"
            f" {received['acknowledged']} acknowledged)"
        )
        lines += [
            f"    {item['eventId']}  {_line(item['monitorId'])}  {item['urgency']}  {item['state']}"
            f"  {_line(item['title'])}"
            for item in received["events"]
        ]
        pending = session["pending"]
        lines.append(f"  Pending: {pending['count']}")
        lines += [
            f"    {item['eventId']}  {_line(item['monitorId'])}  {item['urgency']}"
            f"  {_line(item['title'])} — {item['deliverAt']}"
            for item in pending["events"]
        ]
        armed = session["armed"]
        lines.append(f"  Armed: {armed['count']}")
        lines += [_armed_line(entry) for entry in armed["entries"]]
    return "\n".join(lines)

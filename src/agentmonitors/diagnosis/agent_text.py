"""Text renderings of the agent's verbs (``--format text``); JSON and TOON print the data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _point(point: Mapping[str, Any]) -> str:
    kind = point.get("kind")
    where = f"event {point.get('eventId')}" if point.get("eventId") else "no event"
    at = point.get("capturedAt")
    label = {
        "latest": "latest",
        "previous": "previous snapshot",
        "session-baseline": "what this session was last shown",
        "event": "event",
        "time": f"at or before {point.get('point')}",
    }.get(str(kind), str(kind))
    if kind == "event":
        return f"{where} ({at})"
    return f"{label} ({where}, {at})"


def render_snapshot(result: Mapping[str, Any]) -> str:
    head = (
        f"{result['monitorId']} · {result['objectKey']} · event {result['eventId']}"
        f" · captured {result['capturedAt']}"
    )
    if result.get("truncated"):
        head += f" · first {len(result['content'])} of {result['contentChars']} characters"
    return head + "\n\n" + str(result["content"])


def render_diff(result: Mapping[str, Any]) -> str:
    head = (
        f"{result['monitorId']} · {result['objectKey']}\n"
        f"from {_point(result['from'])}\n"
        f"to   {_point(result['to'])}"
    )
    if not result.get("changed"):
        return head + "\n\nNo difference."
    return head + "\n\n" + str(result["diff"])


def render_summary(result: Mapping[str, Any]) -> str:
    objects = result.get("objects") or []
    lines = [f"{result['monitorId']}: {result['objectCount']} object(s) with events"]
    for item in objects:
        counts = (
            f"{item['unread']} unread, {item['claimed']} claimed"
            if item.get("unread") is not None
            else "pass --session for unread/claimed counts"
        )
        kind = f" {item['changeKind']}" if item.get("changeKind") else ""
        lines.append(
            f"- {item['objectKey']} ({item['urgency']}{kind}): {item['title']}"
            f" · {item['events']} event(s), {counts} · latest {item['latestEventId']}"
            f" at {item['latestAt']}"
        )
        if item.get("summary") and item["summary"] != item["title"]:
            lines.append(f"  {item['summary']}")
    if result.get("moreObjects"):
        lines.append(f"… and {result['moreObjects']} more object(s); pass --object for one")
    return "\n".join(lines)


def _armed_line(entry: Mapping[str, Any]) -> str:
    monitors = ", ".join(entry.get("monitorIds") or ())
    if "observations" in entry:
        what = f"{entry['observations']} observation(s)"
        keys = entry.get("objectKeys") or []
        if keys:
            what += f" ({', '.join(keys)})"
    else:
        what = f"{entry.get('eventCount', 0)} event(s)"
    fires = entry.get("earliestFireAt")
    when = f"; fires at {fires} at the earliest" if fires else ""
    return f"    {entry['reason']}  {monitors}  {what}{when} — {entry.get('detail', '')}"


def render_inspect(report: Mapping[str, Any]) -> str:
    sessions = report.get("sessions") or []
    if not sessions:
        return "No active session in this workspace."
    lines: list[str] = []
    for session in sessions:
        if lines:
            lines.append("")
        lines.append(f"Session {session['sessionId']} ({session['status']})")
        received = session["received"]
        lines.append(
            f"  Received: {received['count']} ({received['claimed']} claimed,"
            f" {received['acknowledged']} acknowledged)"
        )
        lines += [
            f"    {item['eventId']}  {item['monitorId']}  {item['urgency']}  {item['state']}"
            f"  {item['title']}"
            for item in received["events"]
        ]
        pending = session["pending"]
        lines.append(f"  Pending: {pending['count']}")
        lines += [
            f"    {item['eventId']}  {item['monitorId']}  {item['urgency']}  {item['title']}"
            f" — {item['deliverAt']}"
            for item in pending["events"]
        ]
        armed = session["armed"]
        lines.append(f"  Armed: {armed['count']}")
        lines += [_armed_line(entry) for entry in armed["entries"]]
    return "\n".join(lines)

"""``doctor``'s text output: header, transports, one line per check, the summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GLYPHS = {"pass": "✓", "fail": "✗", "skip": "○", "idle": "◇"}


def _transport_line(row: Mapping[str, Any]) -> list[str]:
    if not row["configured"]:
        state = "not reporting"
    elif row["healthy"]:
        state = "healthy"
    elif row["running"]:
        state = "running, unhealthy"
    else:
        state = "not running"
    bound = row.get("boundTo") or {}
    where = f" (bound to {bound.get('workspacePath')})" if bound else ""
    if row["name"] == "follow" and bound.get("sessionId"):
        # A follower serves one session: name it, as the Monitor command does.
        where = f" (session {bound['sessionId']}, bound to {bound.get('workspacePath')})"
    lines = [f"  {row['name']}: {state}{where}"]
    lines += [f"    - {problem['code']}: {problem['detail']}" for problem in row["problems"]]
    return lines


def render_doctor_text(report: Mapping[str, Any]) -> str:
    daemon = report["daemon"]
    state = "running" if daemon["running"] else "not running"
    lines = [
        f"Workspace: {report['workspace']}",
        f"Monitors: {report['monitorsDir']}",
        f"Daemon: {state} ({daemon['socketPath']})",
    ]
    database = report.get("database") or {}
    if database.get("problem"):
        lines.append(f"Database: {database.get('path')} cannot be read ({database['problem']})")
    reopened = database.get("reopened")
    if reopened:
        lines.append(
            f"Database: {reopened.get('reason')} while the daemon ran; reopened at"
            f" {reopened.get('at')}"
        )
    lines += ["", "Delivery transports:"]
    for row in report["transports"]:
        lines += _transport_line(row)
    lines.append(f"  listening: {report['deliveryWillReachThisSession']}")
    lines.append(f"  verdict: {report['verdict']}")
    lines.append("")
    monitor_lines = {row["id"]: row.get("lines") or [] for row in report["monitors"]}
    for check in report["checks"]:
        lines.append(f"{GLYPHS.get(check['status'], '?')} {check['name']}: {check['detail']}")
        name = check["name"]
        if name.startswith("monitor:"):
            lines += [f"    {line}" for line in monitor_lines.get(name[len("monitor:") :], [])]
        if check["status"] in ("fail", "idle") and check.get("remediation"):
            lines.append(f"  ↳ {check['remediation']}")
    summary = report["summary"]
    lines += [
        "",
        f"Summary: {summary['passed']} passed, {summary['failed']} failed,"
        f" {summary['skipped']} skipped, {summary['idle']} idle.",
    ]
    return "\n".join(lines)

"""``doctor``'s text output: header, transports, one line per check, the summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.delivery.transports.registry import transport

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
    where = transport(row["name"]).describe_binding(row.get("boundTo") or {})
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

"""``doctor``'s transport picture: one row per registered transport, and the problems
every transport shares.

Health comes only from the records the transports already write
(``delivery/heartbeats.py``: one reader, one staleness rule); nothing here writes or
reaps. Which records a transport matches to which lead, and what it finds wrong, is its
own doctor check (``delivery/transports/``, each transport's ``doctor``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmonitors.delivery.heartbeats import is_stale, read_records
from agentmonitors.delivery.host_capabilities import HOST_TITLES, UNREACHABLE
from agentmonitors.delivery.transports.health import (
    ADVISORY,
    BLOCKING,
    Expected,
    Lead,
    TransportHealth,
    same_path,
)
from agentmonitors.delivery.transports.registry import transports as registered_transports

__all__ = [
    "ADVISORY",
    "BLOCKING",
    "Diagnose",
    "Expected",
    "Lead",
    "host_checks",
    "pipeline_problems",
    "same_path",
    "transport_json",
    "transports",
]

SUPPRESSING = frozenset({"coalesced-until-ack", "already-claimed"})
Diagnose = Callable[[str, str], Mapping[str, Any]]


def host_checks(leads: Sequence[Lead]) -> list[dict[str, Any]]:
    """One ``host:<name>`` check per host of the active leads that cannot reach every
    delivery point, saying which and what happens instead (a limit, not a failure)."""
    checks = []
    for host in dict.fromkeys(lead.host for lead in leads):
        gaps = UNREACHABLE.get(host, {})
        if not gaps:
            continue
        sessions = ", ".join(lead.session_id for lead in leads if lead.host == host)
        title = HOST_TITLES.get(host, host)
        detail = f"{title} session(s) {sessions} cannot reach " + "; ".join(
            f"{point}: {consequence}" for point, consequence in gaps.items()
        )
        checks.append(
            {"name": f"host:{host}", "status": "pass", "detail": detail, "remediation": None}
        )
    return checks


def pipeline_problems(
    daemon_running: bool,
    socket_path: str,
    leads: Sequence[Lead],
    diagnose: Diagnose | None,
) -> list[dict[str, str]]:
    """Problems every transport shares: no daemon, suppressed reminders, no diagnosis."""
    problems: list[dict[str, str]] = []
    if not daemon_running:
        problems.append(
            {
                "code": "daemon-unreachable",
                "detail": f"no daemon answers at {socket_path}",
                "remediation": "start a Claude Code session in this project (its SessionStart"
                " hook boots the daemon) or run `agentmonitors daemon run`",
            }
        )
        return problems
    if diagnose is None:
        return problems
    for lead in leads:
        problems.extend(_suppression(lead, diagnose, socket_path))
    return problems


def _suppression(lead: Lead, diagnose: Diagnose, socket_path: str) -> list[dict[str, str]]:
    unavailable = {
        "code": "delivery-diagnosis-unavailable",
        "remediation": "run `agentmonitors monitor explain <id>` for the monitor you expected,"
        f" and `agentmonitors events list --session {lead.session_id} --unread`",
    }
    found: list[dict[str, str]] = []
    for lifecycle in ("turn-interruptible", "turn-idle"):
        try:
            report = diagnose(lead.session_id, lifecycle)
        except Exception as error:  # any failure: say so, never guess an ack-all
            return [
                {
                    **unavailable,
                    "detail": f"session {lead.session_id}: hook.diagnose failed ({error})",
                }
            ]
        for hold in report.get("holds") or ():
            if hold.get("reason") not in SUPPRESSING:
                continue
            ids = hold.get("claimedEventIds")
            if (
                not isinstance(ids, list)
                or not ids
                or not all(isinstance(item, str) for item in ids)
            ):
                found.append(
                    {
                        **unavailable,
                        "detail": f"session {lead.session_id}: a {hold.get('urgency')} hold"
                        " names no claimed event ids",
                    }
                )
                continue
            found.append(
                {
                    "code": "reminders-suppressed",
                    "detail": f"session {lead.session_id}: {hold.get('message', '')}",
                    "remediation": f"agentmonitors events ack --session {lead.session_id}"
                    f" --event-ids {','.join(ids)} --socket {socket_path}",
                }
            )
    return found


def _bound_to(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    bound = {
        key: record.get(key)
        for key in ("workspacePath", "socketPath", "home", "dataRoot", "pid", "cliPath")
    }
    for key in ("hostSessionId", "sessionId"):
        if isinstance(record.get(key), str):
            bound[key] = record[key]
    return bound


def transport_json(
    transport: TransportHealth, pipeline: Sequence[Mapping[str, str]], expected: Expected
) -> dict[str, Any]:
    problems = list(transport.problems)
    if transport.configured:
        problems += [dict(problem) for problem in pipeline if dict(problem) not in problems]
    head = transport.records[0] if transport.records else None
    running = any(not is_stale(record, expected.wall_ms) for record in transport.records)
    return {
        "name": transport.name,
        "configured": transport.configured,
        "running": running,
        "healthy": transport.configured
        and running
        and not any(problem["code"] in BLOCKING for problem in problems),
        "boundTo": _bound_to(head),
        "version": None if head is None else head.get("version"),
        "lastDelivery": None if head is None else head.get("lastDeliveryAt"),
        "problems": problems,
    }


def transports(
    leads: Sequence[Lead], expected: Expected, pipeline: Sequence[Mapping[str, str]]
) -> list[dict[str, Any]]:
    """One row per registered transport, always every one, in registration order, from
    the heartbeats as they are now (read-only)."""
    records = read_records()
    rows = []
    for kind in registered_transports():
        mine = [record for record in records if record.get("transport") == kind.name]
        rows.append(transport_json(kind.doctor(mine, leads, expected), pipeline, expected))
    return rows

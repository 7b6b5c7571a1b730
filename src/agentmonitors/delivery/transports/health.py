"""What ``doctor`` reads a transport's health from: heartbeats matched to lead sessions.

See docs/architecture.md, "Transports". Health comes only from the records the
transports already write (``delivery/heartbeats.py``: one reader, one staleness rule);
nothing here writes or reaps. Each transport's own doctor check (its ``doctor``) matches
its records to the leads with these; ``diagnosis/doctor_transports.py`` walks the
registry.
"""

from __future__ import annotations

import os
from collections.abc import Container, Mapping, Sequence
from typing import Any

from agentmonitors.delivery.heartbeats import is_stale
from agentmonitors.fastpath.lean_dataclass import dataclass, field

__all__ = [
    "ADVISORY",
    "BLOCKING",
    "Expected",
    "Lead",
    "TransportHealth",
    "binding_problems",
    "freshness",
    "same_path",
]

BLOCKING = frozenset(
    {
        "daemon-unreachable",
        "workspace-mismatch",
        "socket-mismatch",
        "environment-mismatch",
        "reminders-suppressed",
        "heartbeat-stale",
        "channel-session-unmatched",
        "channel-lead-uncovered",
        "hook-lead-uncovered",
        "delivery-diagnosis-unavailable",
    }
)
ADVISORY = frozenset(
    {
        "version-skew",
        "channel-registration-unverified",
        "live-setting-invalid",
        "wake-setting-invalid",
    }
)


@dataclass(frozen=True)
class Lead:
    session_id: str
    host_session_id: str
    host: str = "claude-code"
    """The agent host the session registered from (its ``adapter``)."""


@dataclass(frozen=True)
class Expected:
    """What a correctly bound transport of this doctor run would report."""

    workspace: str
    socket_path: str
    home: str
    data_root: str
    version: str
    wall_ms: int


@dataclass
class TransportHealth:
    """One transport's row in ``doctor``: its matched heartbeats and their problems."""

    name: str
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)

    @property
    def configured(self) -> bool:
        return bool(self.records)

    def add(self, code: str, detail: str, remediation: str) -> None:
        problem = {"code": code, "detail": detail, "remediation": remediation}
        if problem not in self.problems:
            self.problems.append(problem)

    @property
    def broken(self) -> bool:
        return any(problem["code"] in BLOCKING for problem in self.problems)


def same_path(left: object, right: str) -> bool:
    """Resolved-path equality: the binding rule the daemon's idle reaper uses too."""
    return isinstance(left, str) and os.path.realpath(left) == os.path.realpath(right)


def freshness(record: Mapping[str, Any], expected: Expected) -> tuple[bool, str]:
    """Sort key, newest first: a stale record (a corrupt or future timestamp is stale
    too) sorts below every fresh one; fresh ones by their writers' uniform timestamps."""
    fresh = not is_stale(dict(record), expected.wall_ms)
    updated = record.get("updatedAt")
    return fresh, updated if fresh and isinstance(updated, str) else ""


def uncovered_leads(
    transport: TransportHealth, leads: Sequence[Lead], covered: Container[str], why: str, fix: str
) -> None:
    """A ``<name>-lead-uncovered`` problem for each lead whose host session no heartbeat
    of the transport covers; ``why`` ends the detail."""
    for lead in leads:
        if lead.host_session_id not in covered:
            transport.add(
                f"{transport.name}-lead-uncovered",
                f"active lead session {lead.session_id} (host {lead.host_session_id}) has"
                f" no {transport.name} heartbeat{why}",
                fix,
            )


def binding_problems(
    transport: TransportHealth,
    record: Mapping[str, Any],
    expected: Expected,
    prefix: str,
    stale_fix: str | None = None,
) -> None:
    """The problems one matched record shows, each with its fix."""
    restart = (
        "restart the Claude Code session in this project so its hooks and channel bind to"
        " the right workspace"
    )
    if is_stale(dict(record), expected.wall_ms):
        transport.add(
            "heartbeat-stale",
            f"{prefix}the {transport.name} heartbeat was last written at"
            f" {record.get('updatedAt')!s}, older than its {record.get('ttlMs')!s} ms lifetime"
            " (or unreadable)",
            stale_fix or f"send a prompt in the session (the hook refreshes it) or {restart}",
        )
    if not same_path(record.get("workspacePath"), expected.workspace):
        transport.add(
            "workspace-mismatch",
            f"{prefix}the {transport.name} is bound to workspace"
            f" {record.get('workspacePath')!s}, not {expected.workspace}",
            f"open Claude Code in {expected.workspace}, or {restart}",
        )
    if not same_path(record.get("socketPath"), expected.socket_path):
        transport.add(
            "socket-mismatch",
            f"{prefix}the {transport.name} talks to daemon socket"
            f" {record.get('socketPath')!s}, not {expected.socket_path}",
            "unset AGENTMONITORS_SOCKET (or make it the same for the session and this shell),"
            f" then {restart}",
        )
    if record.get("home") != expected.home or not same_path(
        record.get("dataRoot"), expected.data_root
    ):
        transport.add(
            "environment-mismatch",
            f"{prefix}the {transport.name} runs with HOME={record.get('home')!s} and data"
            f" root {record.get('dataRoot')!s}; this shell has HOME={expected.home} and"
            f" {expected.data_root}",
            "run Claude Code and agentmonitors with the same HOME and XDG_DATA_HOME",
        )
    if record.get("version") != expected.version:
        transport.add(
            "version-skew",
            f"{prefix}the {transport.name} runs agentmonitors {record.get('version')!s};"
            f" this is {expected.version}",
            "restart the Claude Code session so it runs the installed agentmonitors",
        )

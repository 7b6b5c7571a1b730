"""``doctor``'s transport picture: which heartbeats cover which lead, and what is wrong.

Health comes only from the records the hook, channel and follow transports already
write (``delivery/heartbeats.py``: one reader, one staleness rule); nothing here writes
or reaps. A record matches by host session id (a channel across every workspace, so a
channel bound to the wrong project is visible), for a hook by workspace too, and for
``events follow`` by the AgentMon session id it follows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmonitors.delivery.heartbeats import is_stale, read_records
from agentmonitors.fastpath.lean_dataclass import dataclass, field

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
ADVISORY = frozenset({"version-skew", "channel-registration-unverified", "live-setting-invalid"})
SUPPRESSING = frozenset({"coalesced-until-ack", "already-claimed"})
Diagnose = Callable[[str, str], Mapping[str, Any]]


@dataclass(frozen=True)
class Lead:
    session_id: str
    host_session_id: str
    host: str = "claude-code"
    """The agent host the session registered from (its ``adapter``)."""


def host_checks(leads: Sequence[Lead]) -> list[dict[str, Any]]:
    """One ``host:<name>`` check per host of the active leads that cannot reach every
    delivery point, saying which and what happens instead (a limit, not a failure)."""
    from agentmonitors.delivery.host_capabilities import HOST_TITLES, UNREACHABLE

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
class Transport:
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


def _freshness(record: Mapping[str, Any], expected: Expected) -> tuple[bool, str]:
    """Sort key, newest first: a stale record (a corrupt or future timestamp is stale
    too) sorts below every fresh one; fresh ones by their writers' uniform timestamps."""
    fresh = not is_stale(dict(record), expected.wall_ms)
    updated = record.get("updatedAt")
    return fresh, updated if fresh and isinstance(updated, str) else ""


def _binding_problems(
    transport: Transport,
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


def _channel(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> Transport:
    transport = Transport("channel")
    hosts = {lead.host_session_id for lead in leads}
    matched: dict[str, list[dict[str, Any]]] = {}
    unmatched: list[dict[str, Any]] = []
    for record in records:
        host = record.get("hostSessionId")
        if isinstance(host, str) and host in hosts:
            matched.setdefault(host, []).append(record)
        elif same_path(record.get("workspacePath"), expected.workspace) and not is_stale(
            record, expected.wall_ms
        ):
            unmatched.append(record)
            transport.add(
                "channel-session-unmatched",
                f"a channel for this workspace is bound to host session {host or '(none)'},"
                " which is no active lead session here",
                "start Claude Code with CLAUDE_CODE_SESSION_ID set by the host (launch it"
                " normally, not the channel server by hand) so the channel binds to the session",
            )
    for host, found in matched.items():
        transport.records.extend(found)
        for record in found:
            _binding_problems(transport, record, expected, f"{host}: ")
            if not record.get("lastDeliveryAt"):
                transport.add(
                    "channel-registration-unverified",
                    f"{host}: the channel runs but has not delivered anything yet, so it is"
                    " unknown whether Claude Code shows its pushes",
                    "nothing to fix if hooks deliver; for channel pushes Claude Code must load"
                    " the channel (v2.1.80+, channelsEnabled or"
                    " --dangerously-load-development-channels)",
                )
    # The representative (first) is a lead's freshest record; strays come last.
    transport.records.sort(key=lambda record: _freshness(record, expected), reverse=True)
    transport.records.extend(unmatched)
    if matched:
        for lead in leads:
            if lead.host_session_id not in matched:
                transport.add(
                    "channel-lead-uncovered",
                    f"active lead session {lead.session_id} (host {lead.host_session_id}) has"
                    " no channel heartbeat",
                    "restart that Claude Code session with the channel server of the plugin loaded,"
                    " or rely on its hooks",
                )
    return transport


def _hook(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> Transport:
    transport = Transport("hook")
    hosts = {lead.host_session_id for lead in leads}
    here = [
        record
        for record in records
        if record.get("hostSessionId") in hosts
        or same_path(record.get("workspacePath"), expected.workspace)
    ]
    # Active leads first, then the freshest: the first one is the representative.
    here.sort(
        key=lambda record: (record.get("hostSessionId") in hosts, _freshness(record, expected)),
        reverse=True,
    )
    transport.records.extend(here)
    covered = set()
    for record in here:
        host = record.get("hostSessionId")
        if host in hosts:
            covered.add(host)
            _binding_problems(transport, record, expected, f"{host}: ")
        elif record is here[0]:
            _binding_problems(transport, record, expected, "")
    if here:
        for lead in leads:
            if lead.host_session_id not in covered:
                transport.add(
                    "hook-lead-uncovered",
                    f"active lead session {lead.session_id} (host {lead.host_session_id}) has"
                    " no hook heartbeat: its hooks have not run `hook deliver` with this"
                    " installation",
                    "send a prompt in that session; if this stays, reinstall the agentmonitors"
                    " plugin (its hooks run `agentmonitors hook deliver`)",
                )
    return transport


def _follow(
    records: Sequence[dict[str, Any]], leads: Sequence[Lead], expected: Expected
) -> Transport:
    """``events follow`` runs: the active leads' followers, freshest first, then any
    other follower of this workspace. None is expected: it is the agent's to start."""
    transport = Transport("follow")
    sessions = {lead.session_id for lead in leads}
    matched = [record for record in records if record.get("sessionId") in sessions]
    matched.sort(key=lambda record: _freshness(record, expected), reverse=True)
    others = [
        record
        for record in records
        if record.get("sessionId") not in sessions
        and same_path(record.get("workspacePath"), expected.workspace)
    ]
    transport.records.extend(matched + others)
    for record in matched:
        session = record.get("sessionId")
        _binding_problems(
            transport,
            record,
            expected,
            f"{session}: ",
            stale_fix="the follower is gone (killed, or its Monitor stopped it); start the"
            " Monitor tool again with `agentmonitors events follow --session"
            f" {session} --socket {expected.socket_path}`",
        )
    return transport


def _live_setting_problem(transport: Transport, workspace: str) -> None:
    """An enable file ``live:`` value that is neither on nor off (session start then
    keeps offering live updates, its default)."""
    from agentmonitors.workspace import enable_file_path, live_setting, read_local_state

    value = read_local_state(workspace).live
    if live_setting(value) is None:
        path = enable_file_path(workspace)
        transport.add(
            "live-setting-invalid",
            f"{path}: live: {value!r} is neither on nor off, so session start keeps offering"
            " live updates (the default)",
            f"write `live: on` or `live: off` in {path}",
        )


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
    transport: Transport, pipeline: Sequence[Mapping[str, str]], expected: Expected
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
    """``[hook, channel, follow]``, always all three, from the registry as it is now
    (read-only)."""
    records = read_records()
    hook = _hook([r for r in records if r.get("transport") == "hook"], leads, expected)
    channel = _channel([r for r in records if r.get("transport") == "channel"], leads, expected)
    follow = _follow([r for r in records if r.get("transport") == "follow"], leads, expected)
    _live_setting_problem(follow, expected.workspace)
    return [transport_json(row, pipeline, expected) for row in (hook, channel, follow)]

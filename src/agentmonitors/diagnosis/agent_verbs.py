"""One entry point for the agent's read-only verbs, shared by the daemon and the CLI.

The daemon answers ``agent.snapshot|diff|summary|inspect`` with it (its clock, its
in-flight leases); with no daemon the CLI calls it over the database opened
read-only. Either way the answer is the same durable state, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.diagnosis.agent_inspect import inspect_report, rollup_windows
from agentmonitors.diagnosis.agent_lookups import AgentViewError, FileMonitorCheck, Scope
from agentmonitors.diagnosis.agent_views import (
    MAX_SUMMARY_OBJECTS,
    diff_view,
    snapshot_view,
    summary_view,
)
from agentmonitors.monitor.discovery import discover

if TYPE_CHECKING:
    from agentmonitors.store.database import Database

METHODS = {
    "snapshot": "agent.snapshot",
    "diff": "agent.diff",
    "summary": "agent.summary",
    "inspect": "agent.inspect",
}
"""Each verb and the IPC method that answers it."""

__all__ = ["METHODS", "AgentViewError", "answer", "file_monitor_check"]


def file_monitor_check(workspace: str) -> FileMonitorCheck:
    """Whether a monitor file of the workspace (or the user's) defines an id; scanned once,
    and only when an id has nothing stored."""
    known: set[str] | None = None

    def check(monitor_id: str) -> bool:
        nonlocal known
        if known is None:
            scan = discover(workspace)
            known = {monitor.id for monitor in scan.monitors} | {
                failure.id for failure in scan.errors if failure.id is not None
            }
        return monitor_id in known

    return check


def _text(params: Mapping[str, Any], key: str) -> str | None:
    value = params.get(key)
    return value if isinstance(value, str) and value != "" else None


def _count(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def answer(
    db: Database,
    verb: str,
    params: Mapping[str, Any],
    *,
    workspace: str,
    now_ms: int,
    leased: Callable[[str], frozenset[str]] | None = None,
    socket_path: str = "",
) -> dict[str, Any]:
    """The verb's answer; :class:`AgentViewError` when it cannot give one."""
    scope = Scope(workspace, _text(params, "sessionId"), _text(params, "cwd"))
    monitor_id = _text(params, "monitorId") or ""
    object_key = _text(params, "objectKey")
    check = file_monitor_check(workspace)
    with db.read() as conn:
        if verb == "inspect":
            return inspect_report(
                conn,
                workspace=workspace,
                session_id=scope.session_id,
                now_ms=now_ms,
                leased=leased,
                socket_path=socket_path,
                window_of=rollup_windows(workspace),
                limit=_count(params, "limit"),
                show_all=params.get("all") is True,
            )
        if verb == "snapshot":
            offset = _count(params, "offset") or 0
            return snapshot_view(conn, scope, monitor_id, object_key, check, offset=offset)
        if verb == "summary":
            limit = None if params.get("all") is True else _count(params, "limit")
            return summary_view(
                conn,
                scope,
                monitor_id,
                object_key,
                check,
                limit=limit or MAX_SUMMARY_OBJECTS,
                show_all=params.get("all") is True,
            )
        if verb == "diff":
            if object_key is None:
                raise AgentViewError("diff needs --object: the key of the object to compare.")
            return diff_view(
                conn,
                scope,
                monitor_id,
                object_key,
                check,
                from_point=_text(params, "from"),
                to_point=_text(params, "to"),
                whole=params.get("all") is True,
            )
    raise AgentViewError(f"unknown verb {verb!r}")

"""Every IPC method a running daemon serves, in one table.

The methods other modules declare (delivery, agent-declared watches, the agent's
read-only verbs, pacing holds, approvals) and the daemon's own: ``stop``, ``status``,
``history.list``, ``daemon.tick``, ``doctor.report`` and ``monitor.explain``. A new
method is one entry here, its handler beside the state it reads.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.agent_methods import agent_methods
from agentmonitors.daemon.approvals import blocked_method
from agentmonitors.daemon.delivery_methods import delivery_methods
from agentmonitors.daemon.holds_method import pacing_method
from agentmonitors.daemon.server import Method, RequestError, params
from agentmonitors.daemon.watch_methods import watch_methods
from agentmonitors.fastpath.lean_dataclass import replace
from agentmonitors.store import queries
from agentmonitors.store.health import database_facts, quick_check_file

if TYPE_CHECKING:
    from agentmonitors.daemon.app import Daemon


def method_table(daemon: Daemon) -> dict[str, Method]:
    """The methods ``daemon`` serves, bound to its store, clock, runtime and delivery."""
    own = _OwnMethods(daemon)
    options = daemon.options
    return {
        **delivery_methods(daemon.delivery),
        # A new watch is observed at once: its baseline is what later changes are
        # measured against.
        **watch_methods(
            daemon.db,
            daemon.registry,
            daemon.clock,
            options.workspace,
            lambda monitor_id: daemon.hint({monitor_id: None}),
        ),
        # snapshot, diff, summary, inspect: read-only, with this daemon's clock and leases.
        **agent_methods(
            daemon.db,
            daemon.clock,
            workspace=options.workspace,
            socket_path=options.socket_path,
            leased=daemon.delivery.reservations.leased,
        ),
        "monitor.blocked": blocked_method(daemon.runtime),
        "monitor.pacing": pacing_method(daemon.runtime, daemon.db, daemon.clock),
        # A follower's wait for its session's next change (daemon/live_waits.py).
        "delivery.wait": daemon.waits.method(),
        "stop": Method(own.stop, params()),
        "status": Method(own.status, params()),
        "history.list": Method(
            own.history,
            params(
                monitorId=(str, False),
                workspacePath=(str, False),
                limit=(int, False),
                withTotal=(bool, False),
            ),
        ),
        "daemon.tick": Method(
            own.tick, params(monitorsDir=(str, False), workspacePath=(str, False))
        ),
        "doctor.report": Method(
            own.doctor,
            params(
                monitorsDir=(str, False),
                workspacePath=(str, False),
                historyLimit=(int, False),
                socketPath=(str, False),
                home=(str, False),
                dataRoot=(str, False),
                version=(str, False),
            ),
        ),
        "monitor.explain": Method(
            own.explain,
            params(
                monitorId=(str, True),
                monitorsDir=(str, False),
                workspacePath=(str, False),
                historyLimit=(int, False),
                eventLimit=(int, False),
            ),
        ),
    }


class _OwnMethods:
    """The handlers of the methods that read the daemon itself."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    async def stop(self, _: dict[str, Any]) -> Any:
        self.daemon.request_stop()
        return {"stopping": True, "pid": os.getpid()}

    async def status(self, _: dict[str, Any]) -> Any:
        daemon = self.daemon
        daemon.require_store()
        counts = queries.session_counts(daemon.db)
        return {
            "sessions": counts["total"],
            "activeSessions": counts["active"],
            "dormantSessions": counts["dormant"],
            "events": queries.count_rows(daemon.db, "monitor_events"),
            "pid": os.getpid(),
            "reapAfterMs": daemon.options.reap_after_ms,
            "workspacePath": daemon.options.workspace,
            "uptimeMs": daemon.clock.now_ms() - daemon.started_at_ms,
            "fileEvents": daemon.file_events_status(),
            "database": {
                "path": daemon.options.db_path,
                "reopened": daemon.store_reopened,
                **database_facts(daemon.db, daemon.options.db_path),
                "retention": daemon.retention.status(),
            },
        }

    async def history(self, request: dict[str, Any]) -> Any:
        db = self.daemon.db
        limit = request.get("limit", queries.DEFAULT_HISTORY_LIMIT)
        if limit < 0:
            raise RequestError("limit must not be negative")
        monitor_id, workspace = request.get("monitorId"), request.get("workspacePath")
        listed = [
            row.to_json()
            for row in queries.list_history(
                db, monitor_id=monitor_id, workspace=workspace, limit=limit
            )
        ]
        if not request.get("withTotal"):
            return listed  # the compatible shape: a bare array
        # Additive: how many there are in all, so a listing can say what it left out.
        total = queries.count_history(db, monitor_id=monitor_id, workspace=workspace)
        return {"observations": listed, "total": total}

    async def tick(self, request: dict[str, Any]) -> Any:
        daemon = self.daemon
        workspace = request.get("workspacePath", daemon.options.workspace)
        if workspace != daemon.options.workspace:
            raise RequestError(f"this daemon serves {daemon.options.workspace}, not {workspace}")
        daemon.require_store()
        result = await daemon.runtime.tick()
        daemon.report(result)
        return result.to_json()

    async def doctor(self, request: dict[str, Any]) -> Any:
        # Lazy: 25 ms of diagnosis modules that the first `session start` would wait for.
        from agentmonitors.diagnosis.doctor import build_report, doctor_context

        daemon = self.daemon
        daemon.require_store()
        # A large file takes a while to check: in a thread, on a connection of its own.
        checked = await asyncio.to_thread(quick_check_file, daemon.options.db_path)
        ctx = doctor_context(
            request,
            workspace=daemon.options.workspace,
            monitors_dir=daemon.options.monitors_dir,
            socket_path=daemon.options.socket_path,
            now_ms=daemon.clock.now_ms(),
            diagnose=daemon.delivery.diagnose,
            runtime=daemon.runtime,
            store_reopened=daemon.store_reopened,
            db_path=daemon.options.db_path,
            file_events=daemon.file_events_status(),
        )
        return build_report(daemon.db, daemon.registry, replace(ctx, quick_check=checked))

    async def explain(self, request: dict[str, Any]) -> Any:
        # Lazy: loaded with doctor's modules, which the first `session start` would wait for.
        from agentmonitors.diagnosis.explain import explain_monitor

        daemon = self.daemon
        return explain_monitor(
            daemon.db,
            daemon.registry,
            monitor_id=request["monitorId"],
            workspace=request.get("workspacePath", daemon.options.workspace),
            monitors_dir=request.get("monitorsDir") or daemon.options.monitors_dir,
            history_limit=request.get("historyLimit", 10),
            event_limit=request.get("eventLimit", 10),
            now_ms=daemon.clock.now_ms(),
            runtime=daemon.runtime,
            leases=daemon.delivery.reservations.leased,
            socket_path=daemon.options.socket_path,
        )

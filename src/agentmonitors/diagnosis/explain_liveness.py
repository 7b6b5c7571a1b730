"""``monitor explain``'s liveness: the silence a monitor expects to end, and its failures
in a row, as the runtime reads them from the stored rows (runtime/liveness.py).

Not a stage: a silent or failing monitor is news for the agent, not a break in the
path from change to session, so it never decides the verdict.
"""

from __future__ import annotations

from typing import Any

from agentmonitors.clock import iso_from_ms
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.human import human_duration, human_wait
from agentmonitors.runtime.liveness import FAILURES_IN_A_ROW, silence_window
from agentmonitors.store import liveness as rows
from agentmonitors.store.database import Database
from agentmonitors.store.records import iso_from_seconds


def liveness_report(
    db: Database, monitor: MonitorDefinition, workspace: str, now_ms: int
) -> dict[str, Any] | None:
    """``{"reason", ...}`` for the report's ``liveness`` key; None when there is
    nothing to say (no expectation, never failing)."""
    expect = monitor.frontmatter.expect
    with db.read() as conn:
        window = silence_window(conn, monitor, workspace)
        failures = rows.errored_run(conn, monitor.id, workspace)
    if expect is None and failures == 0:
        return None
    report: dict[str, Any] = {"failuresInARow": failures}
    parts = []
    if expect is not None:
        report["changeWithin"] = expect.change_within
        within = human_duration(expect.window_ms)
        if window is None:
            parts.append(
                f"expects a change within {within}; its window starts at its first observation"
            )
        else:
            since = iso_from_seconds(window.start_s)
            origin = "last change" if window.from_change else "first observation"
            report.update(
                windowStartedAt=since,
                windowStartedBy="change" if window.from_change else "first-observation",
                silenceDueAt=iso_from_ms(window.deadline_ms),
            )
            said = f"expects a change within {within}; {origin} at {since}"
            if window.raised_at_s is not None:
                report["silenceRaisedAt"] = iso_from_seconds(window.raised_at_s)
                said += f"; silent, said at {report['silenceRaisedAt']} (the next change ends it)"
            elif window.deadline_ms > now_ms:
                wait = human_wait(window.deadline_ms - now_ms)
                said += f"; silent after {report['silenceDueAt']} (in {wait})"
            else:
                said += "; silent now, said at the next tick"
            parts.append(said)
    if failures:
        parts.append(
            f"{failures} failed observation(s) in a row"
            + (
                " (the sessions were told)"
                if failures >= FAILURES_IN_A_ROW
                else f" (the sessions are told at {FAILURES_IN_A_ROW})"
            )
        )
    report["reason"] = "; ".join(parts)
    return report

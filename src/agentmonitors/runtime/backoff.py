"""A failing monitor's backoff, read back from its observation history.

The daemon keeps backoff in memory. ``daemon once`` is a new process each time, and a
daemon may start while a monitor fails, so without this every start would retry a
failing monitor at once and count its failures from nothing. Its history holds what
is needed: the newest rows that are ``errored``, in a row, are the consecutive
failures, and the newest of them dates the last one.
"""

from __future__ import annotations

import os

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.runtime.scheduling import BACKOFF_BASE_MS, BACKOFF_MAX_MS, retry_delay_ms
from agentmonitors.store import queries
from agentmonitors.store.database import Database
from agentmonitors.store.records import HistoryRow

# Past this many failures in a row the wait no longer grows (see backoff_ms).
_COUNTED = 1 + max(1, (BACKOFF_MAX_MS // BACKOFF_BASE_MS).bit_length())
# How far back a longer run is counted: at one failure per 5 minutes (the longest
# wait), about a year of failing.
_WHOLE_RUN = 100_000


def restored_failures(
    db: Database, monitor_id: str, workspace: str, file_path: str | None, floor_ms: int = 0
) -> tuple[int, int, str | None] | None:
    """(consecutive failures, retry at ms, last message) from the history, or None.

    ``floor_ms`` is the monitor's cadence: no retry comes sooner (``retry_delay_ms``).

    None when the newest row is not an error, or when the monitor's file changed at
    or after the last failure: an edit may be the fix, so it earns an immediate try.
    """
    return backoff_of(failure_run(db, monitor_id, workspace), file_path, floor_ms)


@dataclass(frozen=True)
class FailureRun:
    """The monitor's newest history rows that are errors, in a row."""

    count: int
    newest: HistoryRow | None


def failure_run(db: Database, monitor_id: str, workspace: str) -> FailureRun:
    """How many of the monitor's newest history rows are errors, and the newest row."""
    rows = queries.list_history(db, monitor_id=monitor_id, workspace=workspace, limit=_COUNTED)
    count = _errored_run(rows)
    if count == len(rows) == _COUNTED:
        # A longer run than the wait needs: counted whole, since the count is shown.
        count = _errored_run(
            queries.list_history(db, monitor_id=monitor_id, workspace=workspace, limit=_WHOLE_RUN)
        )
    return FailureRun(count, rows[0] if rows else None)


def backoff_of(
    run: FailureRun, file_path: str | None, floor_ms: int = 0
) -> tuple[int, int, str | None] | None:
    """What :func:`restored_failures` answers, from a run already read."""
    count, newest = run.count, run.newest
    if count == 0 or newest is None:
        return None
    last_s = newest.created_at
    if file_path is not None:
        try:
            # History keeps whole seconds: an edit in the same second counts as later.
            if os.stat(file_path).st_mtime >= last_s:
                return None
        except OSError:
            return None
    message = newest.observation_data.get("error")
    retry_at = last_s * 1000 + retry_delay_ms(count, floor_ms)
    return count, retry_at, message if isinstance(message, str) else None


def _errored_run(rows: list[HistoryRow]) -> int:
    """How many of the newest ``rows`` are errors, in a row."""
    count = 0
    for row in rows:
        if row.result != "errored":
            break
        count += 1
    return count

"""Liveness: a monitor's silence and its failures as events (docs/architecture.md,
"Liveness").

Two things are news although no object changed:

- **Silence.** A monitor that declares ``expect: {change-within: 2h}`` and stored no
  real change for that long (counted from its newest change, else from its first
  observation, its baseline) raises one event, ``Docs has not changed in 2h``. The
  next real change ends that silence; the next silence raises one again.
- **Failing.** A monitor whose observations fail three times in a row (each retry
  comes no sooner than its interval, runtime/scheduling.retry_delay_ms) raises one
  event with the reason, and one more when an observation succeeds again.

Both are read back from stored rows (store/liveness.py): the newest events and the
history say when the window started, whether its silence was raised and how long the
monitor has been failing, so a restarted daemon neither forgets nor repeats one.
Liveness events go through the normal pipeline (materialize, project, deliver) under
an object key of their own, at the monitor's urgency (the low bound of its band).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentmonitors.clock import iso_from_ms
from agentmonitors.fastpath.lean_dataclass import dataclass, replace
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.human import human_duration
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store import liveness as rows
from agentmonitors.store.database import Database
from agentmonitors.untrusted import clean_line

if TYPE_CHECKING:
    from agentmonitors.runtime.ingest import Ingest, TickResult

# Failures in a row that make a monitor failing, for the sessions as for ``doctor``.
FAILURES_IN_A_ROW = 3
# The reason shown in a failing event's title, in code points; the body has it whole.
REASON_CAP = 160
# The reason in a failing event's body.
DETAIL_CAP = 2_000


def _bounded(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


def one_line_reason(message: str) -> str:
    """A failure's reason for a title: one line, escaped as untrusted text, bounded."""
    return _bounded(clean_line(" ".join(message.split())), REASON_CAP) or "no reason given"


def silence_observation(monitor: MonitorDefinition, since_ms: int, now_ms: int) -> Observation:
    expect = monitor.frontmatter.expect
    assert expect is not None
    window = human_duration(expect.window_ms)
    since = iso_from_ms(since_ms)
    return Observation(
        title=f"{monitor.display_name} has not changed in {window}",
        summary=f"No change since {since}; a change was expected within {window}.",
        object_key=rows.SILENCE_KEY,
        query_scope={"liveness": rows.SILENT},
        payload={
            "liveness": rows.SILENT,
            "changeWithin": expect.change_within,
            "lastChangeAt": since,
        },
        detail=(
            f"No change was stored since {since} (the last change, or the first "
            f"observation), and the monitor expects one within {window} "
            "(expect.change-within). Its source may have stopped producing, or be "
            "watching the wrong thing."
        ),
    )


def failing_observation(monitor: MonitorDefinition, failures: int, message: str) -> Observation:
    return Observation(
        title=f"{monitor.display_name} has failed {failures} times: {one_line_reason(message)}",
        summary=f"{failures} observations in a row failed; the monitor sees no change meanwhile.",
        object_key=rows.HEALTH_KEY,
        query_scope={"liveness": rows.FAILING},
        payload={"liveness": rows.FAILING, "failures": failures},
        detail=(
            f"The last {failures} observations failed; the last one with:\n"
            f"{_bounded(message, DETAIL_CAP)}\n"
            f"Until one succeeds no change is seen. `agentmonitors monitor explain {monitor.id}`"
            " shows each stage."
        ),
    )


def recovered_observation(monitor: MonitorDefinition, failures: int) -> Observation:
    return Observation(
        title=f"{monitor.display_name} recovered after {failures} failures",
        summary=f"An observation succeeded after {failures} failures in a row.",
        object_key=rows.HEALTH_KEY,
        query_scope={"liveness": rows.RECOVERED},
        payload={"liveness": rows.RECOVERED, "failures": failures},
        detail=f"An observation succeeded again after {failures} failures in a row.",
    )


@dataclass(frozen=True)
class SilenceWindow:
    """The window a monitor expects a change in, as the stored rows say."""

    # When it started (s): the newest real change, else the first observation.
    start_s: int
    # Whether a change started it (else the first observation, the baseline).
    from_change: bool
    deadline_ms: int
    # When this window's silence was raised (s), if it was.
    raised_at_s: int | None


def silence_window(
    conn: sqlite3.Connection, monitor: MonitorDefinition, workspace: str | None
) -> SilenceWindow | None:
    """The monitor's current window, or None when it expects nothing or was never
    observed (its window has not started)."""
    expect = monitor.frontmatter.expect
    if expect is None:
        return None
    change = rows.last_change(conn, monitor.id, workspace)
    start_s = (
        change[0] if change is not None else rows.first_observation(conn, monitor.id, workspace)
    )
    if start_s is None:
        return None
    silence = rows.last_silence(conn, monitor.id, workspace)
    # Raised in this window: newer than the change that started it (ids break a tie
    # within a second), or, with no change yet, since the first observation.
    raised = silence is not None and (
        silence > change if change is not None else silence[0] >= start_s
    )
    return SilenceWindow(
        start_s,
        change is not None,
        start_s * 1000 + expect.window_ms,
        silence[0] if raised and silence is not None else None,
    )


class Liveness:
    """Raises a runtime's liveness events; the tick calls it after storing what it
    observed."""

    def __init__(self, db: Database, workspace: str, storing: Ingest) -> None:
        self.db = db
        self.workspace = workspace
        self.storing = storing
        # Each monitor's failures in a row as of its last observation, once read from the
        # history (first sight in this process) and counted here from then on.
        self._runs: dict[str, int] = {}
        # Silence deadlines moved to this process's clock after it was set back, by
        # (monitor, window start s).
        self._set_back: dict[tuple[str, int], int] = {}

    def knows(self, monitor_id: str, failures_in_a_row: int) -> None:
        """The failures in a row before this tick's observation, read from the history
        by whoever read it already (the backoff's restore)."""
        self._runs.setdefault(monitor_id, failures_in_a_row)

    def forget(self, keep: Callable[[str], bool]) -> None:
        for monitor_id in [key for key in self._runs if not keep(key)]:
            del self._runs[monitor_id]

    def _run_before(self, monitor_id: str) -> int:
        """The failures in a row before the observation whose history row was just
        written: counted here, or read from the history under that row."""
        known = self._runs.get(monitor_id)
        if known is not None:
            return known
        with self.db.read() as conn:
            return rows.errored_run(conn, monitor_id, self.workspace, skip=1)

    def failed(
        self, monitor: MonitorDefinition, message: str, now: int, result: TickResult
    ) -> None:
        """One more failed observation, its ``errored`` history row written."""
        run = self._runs[monitor.id] = self._run_before(monitor.id) + 1
        # Said once per failing run: the newest health event tells whether it was (a
        # run that began before a crash, or before this version, is said late, once).
        if run >= FAILURES_IN_A_ROW and self._last_health(monitor) != rows.FAILING:
            self._raise(monitor, failing_observation(monitor, run, message), now, result)

    def succeeded(self, monitor: MonitorDefinition, now: int, result: TickResult) -> None:
        """An observation that did not fail, its history row written."""
        if self._runs.get(monitor.id) == 0:
            return
        before = self._run_before(monitor.id)
        self._runs[monitor.id] = 0
        # A recovery follows the failing event it ends, and only that.
        if before >= FAILURES_IN_A_ROW and self._last_health(monitor) == rows.FAILING:
            self._raise(monitor, recovered_observation(monitor, before), now, result)

    def _last_health(self, monitor: MonitorDefinition) -> str | None:
        # Read only during a run of three or more failures: rare, and backed off.
        with self.db.read() as conn:
            return rows.last_health(conn, monitor.id, self.workspace)

    def check_silence(self, monitor: MonitorDefinition, now: int, result: TickResult) -> None:
        """Raise the monitor's silence when its window passed; else wake for its end."""
        with self.db.read() as conn:
            window = silence_window(conn, monitor, self.workspace)
        if window is None or window.raised_at_s is not None:
            return  # not started, or this silence was raised: the next change starts one
        deadline = window.deadline_ms
        start_ms = window.start_s * 1000
        if start_ms > now:
            # The window began "in the future": the wall clock was set back since. It
            # lasts its length from when this process saw that, not the jump longer.
            key = (monitor.id, window.start_s)
            deadline = self._set_back.setdefault(key, now + deadline - start_ms)
        if now < deadline:
            result.wake_at(deadline)
            return
        self._raise(monitor, silence_observation(monitor, window.start_s * 1000, now), now, result)

    def _raise(
        self, monitor: MonitorDefinition, observation: Observation, now: int, result: TickResult
    ) -> None:
        # Unnamed: an event's title is the monitor's name when it has one, and this
        # event's title says what happened to that monitor.
        captured = replace(CapturedMonitor.of(monitor), name=None)
        envelope = envelope_for(captured, observation, now)
        with self.db.write() as conn:
            self.storing.materialize_all(monitor, [envelope], now, result, conn)

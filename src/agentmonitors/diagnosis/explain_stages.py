"""The middle stages of ``monitor explain``: scheduling, observation, notify, materialization.

Each takes the shared :class:`~agentmonitors.diagnosis.explain_common._Context` and
returns one stage of the report (see :mod:`agentmonitors.diagnosis.explain`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmonitors.clock import iso_from_ms
from agentmonitors.diagnosis.explain_common import (
    IDLE_RESULTS,
    _Context,
    _every,
    _plural,
    _stage,
)
from agentmonitors.diagnosis.pacing import notify_hold
from agentmonitors.monitor.cron import next_cron_fire_ms
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.backoff import restored_failures
from agentmonitors.runtime.human import human_wait
from agentmonitors.runtime.notify import pending_count
from agentmonitors.runtime.scheduling import cadence_of, schedule_for
from agentmonitors.sources.traits import OnCron
from agentmonitors.store.records import iso_from_seconds
from agentmonitors.workspace import read_local_state

if TYPE_CHECKING:
    from agentmonitors.sources.traits import SourceTraits


# --------------------------------------------------------------------------- scheduling


def _scheduling(ctx: _Context, monitor: MonitorDefinition, traits: SourceTraits) -> dict[str, Any]:
    now = ctx.now_ms
    config = monitor.source_config
    last = ctx.state.last_observation_at_ms if ctx.state is not None else None
    schedule = schedule_for(traits, config, last, now)
    details: dict[str, Any] = {
        "due": schedule.due,
        "nextPollMs": schedule.next_poll_ms,
        "lastObservationAt": None if last is None else iso_from_ms(last),
        "stateRecorded": ctx.state is not None,
    }
    if schedule.error is not None:
        ctx.schedule_error = schedule.error
        details["error"] = schedule.error
        return _stage(
            "scheduling",
            "failure",
            f"The schedule cannot be evaluated, so the monitor never runs: {schedule.error}",
            details,
        )
    next_due: int | None = now if schedule.due else None
    # The schedule was evaluated without error, so the source's cadence is readable.
    how = cadence_of(traits, config)
    if isinstance(how, OnCron):
        cron, timezone = how.cron, how.timezone
        cadence = f"cron '{cron}' ({timezone})"
        details.update(cron=cron, timezone=timezone)
        if not schedule.due and isinstance(cron, str) and isinstance(timezone, str):
            # Not due: this minute's fire (if any) is taken, so the next one lies
            # after the minute's start, exactly as the tick computes it.
            try:
                next_due = next_cron_fire_ms(cron, timezone, now - now % 60_000)
            except ValueError:
                next_due = None
    else:
        every = how.interval_ms
        cadence = _every(every)
        details["intervalMs"] = every
        if not schedule.due:
            next_due = (last if last is not None else now) + every
    details["nextDueAt"] = None if next_due is None else iso_from_ms(next_due)
    if schedule.due:
        when = "now"
    elif next_due is None:
        when = "never (the cron expression has no upcoming match)"
    else:
        when = f"in {human_wait(next_due - now)}, at {iso_from_ms(next_due)}"
    count, retry_at, message = _failures(ctx, monitor, schedule.next_poll_ms)
    if count > 0:
        details.update(consecutiveFailures=count, retryAt=iso_from_ms(retry_at), lastError=message)
        if retry_at > now:
            details["nextDueAt"] = iso_from_ms(max(retry_at, next_due or retry_at))
            return _stage(
                "scheduling",
                "pending",
                f"Backing off after {_plural(count, 'consecutive failure')}; next attempt "
                f"in {human_wait(retry_at - now)}, at {iso_from_ms(retry_at)} ({cadence}).",
                details,
            )
    if ctx.daemon_running is False:
        reason = _without_daemon(ctx.workspace, last, when, cadence, details)
        return _stage("scheduling", "ok", reason, details)
    if last is None:
        reason = f"Not observed yet; due {when} ({cadence})."
    else:
        reason = f"Last observed at {iso_from_ms(last)}; next due {when} ({cadence})."
    return _stage("scheduling", "ok", reason, details)


def start_hint(workspace: str) -> str:
    """How a daemon comes to run for ``workspace`` (only an enabled project gets one)."""
    enable = (
        ""
        if read_local_state(workspace).enabled
        else "enable the project with `agentmonitors init --enable-only`, then "
    )
    return (
        f"{enable}start one with `agentmonitors daemon start` (a Claude Code session opening"
        " here starts it too), or observe due monitors once now with `agentmonitors daemon"
        " once`"
    )


def _without_daemon(
    workspace: str, last: int | None, when: str, cadence: str, details: dict[str, Any]
) -> str:
    """The schedule while no daemon runs: nothing is observed until one starts."""
    details["waitsForDaemon"] = True
    if details.get("due"):
        # "Due now" would promise an observation nobody is there to make.
        details["nextDueAt"] = None
        when = "as soon as a daemon runs"
    else:
        when = f"{when}, if a daemon runs by then"
    seen = "Not observed yet" if last is None else f"Last observed at {iso_from_ms(last)}"
    return (
        f"{seen}; due {when} ({cadence}). No daemon runs for this workspace, so nothing is"
        f" observed until one starts: {start_hint(workspace)}."
    )


def _failures(
    ctx: _Context, monitor: MonitorDefinition, floor_ms: int
) -> tuple[int, int, str | None]:
    """(failures in a row, retry at, last message): the daemon's, or with none running
    read back from the history as ``daemon once`` reads it."""
    if ctx.runtime is not None:
        return ctx.runtime.failure_of(monitor.id)
    found = restored_failures(ctx.db, monitor.id, ctx.workspace, monitor.file_path, floor_ms)
    return found if found is not None else (0, 0, None)


# --------------------------------------------------------------------------- observation


def _observation(ctx: _Context, monitor: MonitorDefinition) -> dict[str, Any]:
    latest = ctx.latest
    if ctx.schedule_error is not None:
        details: dict[str, Any] = {"error": ctx.schedule_error}
        if latest is not None:
            details["latestResult"] = latest.result
        return _stage(
            "observation",
            "failure",
            "The source is never observed while its schedule cannot be evaluated: "
            f"{ctx.schedule_error}",
            details,
        )
    if latest is None:
        return _stage(
            "observation",
            "pending",
            "Not observed yet: no observation history is recorded for this monitor "
            "in this workspace.",
        )
    at = iso_from_seconds(latest.created_at)
    data = latest.observation_data
    details = {"result": latest.result, "observedAt": at, **data}
    observed = data.get("observed")
    emitted = data.get("emitted")
    if latest.result == "errored":
        error = data.get("error", "no message recorded")
        return _stage(
            "observation", "failure", f"The latest observation ({at}) errored: {error}", details
        )
    if latest.result == "no-change":
        return _stage(
            "observation",
            "healthy",
            f"Source ran at {at} and observed 0 changes — the watched target has not "
            "changed (not a bug).",
            details,
        )
    if latest.result == "rebaselined":
        return _stage(
            "observation",
            "healthy",
            f"Source rebaselined at {at} and reported no change — the target is tracked, "
            "nothing to report (not a bug).",
            details,
        )
    if latest.result == "no-files-matched":
        globs = monitor.source_config.get("globs")
        cwd = monitor.source_config.get("cwd")
        details.update(globs=globs, cwd=cwd, workspace=ctx.workspace)
        return _stage(
            "observation",
            "healthy",
            f"Source ran at {at} but matched no files; if files should match, check "
            f"watch.globs and watch.cwd (relative to the workspace {ctx.workspace}).",
            details,
        )
    seen = _plural(observed, "change") if isinstance(observed, int) else "some changes"
    if latest.result == "suppressed":
        return _stage(
            "observation",
            "ok",
            f"The latest observation ({at}) saw {seen}; notify emitted none yet "
            "(held, throttled or filtered).",
            details,
        )
    if latest.result == "triggered":
        if observed == 0 and isinstance(emitted, int):
            reason = (
                f"The latest evaluation ({at}) released {_plural(emitted, 'held observation')}."
            )
        else:
            reason = f"The latest observation ({at}) saw {seen} and emitted {emitted}."
        return _stage("observation", "ok", reason, details)
    return _stage(
        "observation", "ok", f"The latest observation outcome ({at}) was {latest.result}.", details
    )


# --------------------------------------------------------------------------- notify


def _notify(ctx: _Context, monitor: MonitorDefinition) -> dict[str, Any]:
    authored = monitor.notify_as_authored()
    base: dict[str, Any] = {"strategy": authored.get("strategy") if authored else None}
    hold = notify_hold(ctx.notify_state, dict(authored) if authored else None, ctx.now_ms)
    if hold is not None:
        reason = hold.pop("reason")
        return _stage("notify", "pending", reason, {**base, **hold})
    return _stage(
        "notify", "ok", "No debounce, rollup or throttle hold is active.", {**base, "held": 0}
    )


# --------------------------------------------------------------------------- materialization


def _materialization(ctx: _Context, observation: str, notify: str) -> dict[str, Any]:
    latest_event = ctx.latest_event
    if latest_event is not None:
        at = iso_from_seconds(latest_event.created_at)
        details = {
            "count": ctx.event_total,
            "latestEventId": latest_event.id,
            "latestTitle": latest_event.title,
            "latestAt": at,
            "eventIds": [event.id for event in ctx.events],
        }
        return _stage(
            "materialization",
            "ok",
            f'{_plural(ctx.event_total, "event")} stored; latest "{latest_event.title}" at {at}.',
            details,
        )
    latest = ctx.latest
    if notify == "pending" and pending_count(ctx.notify_state):
        return _stage(
            "materialization",
            "pending",
            "No events yet — the monitor's notify pacing is holding the observations.",
            {"count": 0},
        )
    if latest is None or observation in ("pending", "failure"):
        return _stage(
            "materialization",
            "pending",
            "No events yet — waiting for a successful observation.",
            {"count": 0},
        )
    if latest.result in IDLE_RESULTS:
        return _stage(
            "materialization",
            "healthy",
            "No events — expected, the source observed no changes (not a bug).",
            {"count": 0},
        )
    if latest.result == "suppressed":
        return _stage(
            "materialization",
            "healthy",
            "No events — the observed changes were throttled or filtered out by the notify "
            "and payload settings.",
            {"count": 0},
        )
    return _stage(
        "materialization",
        "failure",
        "No event was stored for this monitor although its latest observation "
        f"({latest.result}) reported changes. Restart the daemon (`agentmonitors daemon "
        "stop`; the next session start starts it again) and, if it happens again, report it "
        "with the output of `agentmonitors doctor --format json`.",
        {"count": 0},
    )

"""schedule: fires whenever a cron expression matches, in a time zone.

The runtime decides *when* a schedule monitor is due (``runtime/scheduling.py``: the
cron fires in the current minute, read in ``timezone``, and the monitor has not run in
that minute; fires the daemon slept through are one catch-up run, and a minute missed
while no daemon ran is never replayed). ``observe`` only reports the trigger: every call
yields exactly one observation, stamped with the runtime's clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.clock import iso_from_ms
from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.sources.schedule.plain import ScheduleSettings, plain_config
from agentmonitors.sources.traits import Cadence, OnCron, Scaffold, ScaffoldSeed


class ScheduleSource(ModelSource):
    name = "schedule"
    description = "Emits one event each time its cron expression matches."
    stateful = False
    config_model_ref = "agentmonitors.sources.schedule.config:ScheduleConfig"

    def cadence(self, config: Mapping[str, Any]) -> Cadence:
        """Its cron decides; an authored ``interval`` is ignored (``config_warnings`` says so)."""
        return OnCron(config.get("cron"), config.get("timezone", "UTC"))

    def scaffold(self, seed: ScaffoldSeed) -> Scaffold:
        del seed
        return Scaffold(
            watch=(
                "  # minute hour day-of-month month day-of-week: weekdays at 09:00.\n"
                "  cron: '0 9 * * 1-5'\n"
                "  timezone: UTC\n"
                "  # label: Morning check-in\n"
            ),
            body=(
                "It is time for the scheduled check. Review the state of the work and report\n"
                "anything that needs attention.\n"
            ),
        )

    def config_warnings(self, config: Mapping[str, Any]) -> list[str]:
        if "interval" in config:
            return [
                "watch.interval is ignored by the schedule source: watch.cron decides when "
                "it fires (the cron is checked every minute)"
            ]
        return []

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """One trigger observation; the config is re-checked (the tick does not validate)."""
        parsed = self.observed_config(config, plain_config)
        return ObservationResult([trigger_observation(parsed, context.now_ms)])


def trigger_observation(config: ScheduleSettings, now_ms: int) -> Observation:
    """The observation of one trigger: raw facts, ``now`` only in the snapshot."""
    cron, timezone = config.cron, config.timezone
    title = config.label if config.label else f"Scheduled trigger: {cron}"
    return Observation(
        title=title,
        summary=title,
        payload={"cron": cron, "timezone": timezone},
        snapshot={"cron": cron, "timezone": timezone, "triggeredAt": iso_from_ms(now_ms)},
        object_key=cron,
        query_scope={"cron": cron, "timezone": timezone},
    )

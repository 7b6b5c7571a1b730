"""How long ``verify`` waits at each stage: the budget derived from the monitor.

I is the observation interval, S the settle time its notify policy adds, C the
confirmation a high-urgency monitor gets, M a margin. Baseline waits I+M; detection
I+S+C+M; materialize and deliver get a fresh S+C+M after the event.
"""

from __future__ import annotations

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.durations import duration_ms
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.traits import FALLBACK_VERIFY_INTERVAL_MS

# The interval assumed for a source that is not scheduled by one (a cron minute).
FALLBACK_INTERVAL_MS = FALLBACK_VERIFY_INTERVAL_MS
HIGH_SETTLE_MS = 15_000
HIGH_CONFIRM_MS = 15_000
MIN_MARGIN_MS = 5_000


@dataclass(frozen=True)
class Budget:
    interval_ms: int
    settle_ms: int
    confirm_ms: int
    margin_ms: int

    @property
    def baseline_ms(self) -> int:
        return self.interval_ms + self.margin_ms

    @property
    def detect_ms(self) -> int:
        return self.interval_ms + self.settle_ms + self.confirm_ms + self.margin_ms

    @property
    def observe_ms(self) -> int:
        """How long observe may run: detection, or two full intervals when longer."""
        return max(self.detect_ms, 2 * self.interval_ms + self.margin_ms)

    @property
    def deliver_ms(self) -> int:
        """The fresh allowance materialize and deliver share once the event exists."""
        return self.settle_ms + self.confirm_ms + self.margin_ms


def is_high(monitor: MonitorDefinition) -> bool:
    band = monitor.frontmatter.urgency
    return band is not None and band.hi == "high"


def interval_of(monitor: MonitorDefinition, registry: SourceRegistry) -> int:
    """The authored interval, else what the source says one observation takes to come
    round (``Source.verify_interval_ms``: its cadence, a minute for a cron)."""
    authored = monitor.source_config.get("interval")
    if isinstance(authored, str):
        return duration_ms(authored)
    return registry.traits(monitor.source_name).verify_interval_ms(monitor.source_config)


def settle_of(monitor: MonitorDefinition) -> int:
    notify = monitor.frontmatter.notify
    if notify is None:
        return HIGH_SETTLE_MS if is_high(monitor) else 0
    if notify.strategy == "debounce":
        return duration_ms(notify.settle_for)
    return 0


def budget_for(monitor: MonitorDefinition, registry: SourceRegistry) -> Budget:
    interval = interval_of(monitor, registry)
    return Budget(
        interval_ms=interval,
        settle_ms=settle_of(monitor),
        confirm_ms=HIGH_CONFIRM_MS if is_high(monitor) else 0,
        margin_ms=max(MIN_MARGIN_MS, interval // 4),
    )

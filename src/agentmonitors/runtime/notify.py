"""Pace: when an observation becomes an event (immediate, debounce, throttle, rollup).

Everything here is a pure function of (monitor, observations, now, stored state), so
the timing rules are tested by moving a number instead of sleeping. The state is the
``notifyState`` JSON of docs/compatibility.md ("Stored state"), key for key, so held
batches survive a restart and a switch between implementations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from agentmonitors.clock import iso_from_ms, ms_from_iso
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.cron import cron_fires_in_minute, next_cron_fire_ms
from agentmonitors.monitor.durations import duration_ms
from agentmonitors.monitor.policy import (
    URGENCY_RANK,
    DebouncePolicy,
    MonitorDefinition,
    NotifyPolicy,
    PayloadPolicy,
    RollupPolicy,
    ShapePolicy,
    ThrottlePolicy,
    UrgencyBand,
    UrgencyLevel,
    parse_urgency_band,
)
from agentmonitors.sources.observation import Observation

# Without an authored notify, high observations wait for things to settle.
HIGH_DEFAULT = DebouncePolicy("15s")


@dataclass(frozen=True)
class CapturedMonitor:
    """The parts of a definition an event is built from, frozen when observed.

    A held observation materializes with the definition it was observed under, even
    if the file changed while it waited.
    """

    id: str
    display_name: str
    file_path: str
    instructions: str
    source_name: str
    name: str | None
    band: UrgencyBand
    baseline_strategy: str
    tags: tuple[str, ...]
    # The Shape inputs, so a held observation is shaped as it was authored.
    shape: ShapePolicy | None = field(default=None, hash=False)
    payload: PayloadPolicy | None = field(default=None, hash=False)

    @classmethod
    def of(cls, monitor: MonitorDefinition) -> CapturedMonitor:
        frontmatter = monitor.frontmatter
        return cls(
            id=monitor.id,
            display_name=monitor.display_name,
            file_path=monitor.file_path,
            instructions=monitor.instructions,
            source_name=monitor.source_name,
            name=frontmatter.name,
            band=frontmatter.band,
            baseline_strategy=frontmatter.baseline_strategy,
            tags=tuple(frontmatter.tags or ()),
            shape=frontmatter.shape,
            payload=frontmatter.payload,
        )

    def to_json(self) -> dict[str, Any]:
        frontmatter: dict[str, Any] = {
            "watch": {"type": self.source_name},
            "urgency": str(self.band),
            "baseline-strategy": self.baseline_strategy,
        }
        if self.name is not None:
            frontmatter["name"] = self.name
        if self.tags:
            frontmatter["tags"] = list(self.tags)
        if self.shape is not None:
            frontmatter["shape"] = self.shape.as_authored()
        if self.payload is not None:
            frontmatter["payload"] = self.payload.as_authored()
        return {
            "id": self.id,
            "displayName": self.display_name,
            "frontmatter": frontmatter,
            "instructions": self.instructions,
            "filePath": self.file_path,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], fallback: CapturedMonitor) -> CapturedMonitor:
        frontmatter = data.get("frontmatter")
        if not isinstance(frontmatter, dict):
            frontmatter = {}
        watch = frontmatter.get("watch")
        source = watch.get("type") if isinstance(watch, dict) else None
        try:
            band = parse_urgency_band(str(frontmatter.get("urgency", fallback.band)))
        except ValueError:
            band = fallback.band
        tags = frontmatter.get("tags")
        name = frontmatter.get("name")
        strategy = frontmatter.get("baseline-strategy")
        shape, payload = _stored_shaping(frontmatter.get("shape"), frontmatter.get("payload"))
        return cls(
            id=str(data.get("id", fallback.id)),
            display_name=str(data.get("displayName", fallback.display_name)),
            file_path=str(data.get("filePath", fallback.file_path)),
            instructions=str(data.get("instructions", fallback.instructions)),
            source_name=source if isinstance(source, str) else fallback.source_name,
            name=name if isinstance(name, str) else None,
            band=band,
            baseline_strategy=strategy if strategy in ("net", "incremental") else "net",
            tags=tuple(str(tag) for tag in tags) if isinstance(tags, list) else (),
            shape=shape,
            payload=payload,
        )


def _stored_shaping(shape: Any, payload: Any) -> tuple[ShapePolicy | None, PayloadPolicy | None]:
    """A stored shape and payload block, each None when absent or no longer valid.

    A block that fails the model's checks (pydantic's ``ValidationError`` is a
    ``ValueError``) was written by another version and is dropped.
    """
    if shape is None and payload is None:
        return None, None
    # Lazy: the model brings pydantic (over 100 ms); only a held shape or payload gets here.
    from agentmonitors.monitor.model import Payload, Shape

    kept_shape: ShapePolicy | None = None
    kept_payload: PayloadPolicy | None = None
    if shape is not None:
        with contextlib.suppress(ValueError):
            kept_shape = Shape.model_validate(shape).to_policy()
    if payload is not None:
        with contextlib.suppress(ValueError):
            kept_payload = Payload.model_validate(payload).to_policy()
    return kept_shape, kept_payload


@dataclass(frozen=True)
class Envelope:
    """One observation on its way through Pace."""

    monitor: CapturedMonitor
    observation: Observation
    observed_at_ms: int
    effective_urgency: UrgencyLevel

    @property
    def escalated(self) -> bool:
        return URGENCY_RANK[self.effective_urgency] > URGENCY_RANK[self.monitor.band.lo]

    def to_json(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor.to_json(),
            "observation": self.observation.to_json(),
            "observedAt": iso_from_ms(self.observed_at_ms),
            "effectiveUrgency": self.effective_urgency,
        }

    @classmethod
    def from_json(cls, data: Any, fallback: CapturedMonitor, now_ms: int) -> Envelope | None:
        """Rebuild a held envelope; None when it is too damaged to materialize."""
        if not isinstance(data, dict) or not isinstance(data.get("observation"), dict):
            return None
        monitor_data = data.get("monitor")
        monitor = (
            CapturedMonitor.from_json(monitor_data, fallback)
            if isinstance(monitor_data, dict)
            else fallback
        )
        observation = Observation.from_json(data["observation"])
        observed_at = ms_from_iso(str(data.get("observedAt", "")))
        stored = data.get("effectiveUrgency")
        urgency: UrgencyLevel = next(
            (level for level in URGENCY_RANK if level == stored),
            monitor.band.clamp(observation.salience),
        )
        return cls(monitor, observation, now_ms if observed_at is None else observed_at, urgency)


def envelope_for(monitor: CapturedMonitor, observation: Observation, now_ms: int) -> Envelope:
    return Envelope(monitor, observation, now_ms, monitor.band.clamp(observation.salience))


@dataclass
class DispatchResult:
    emitted: list[Envelope] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)


NotifyConfig = NotifyPolicy


def effective_config(authored: NotifyConfig | None, envelope: Envelope) -> NotifyConfig | None:
    """The authored notify, else a 15 s settle for high observations, else immediate."""
    if authored is not None:
        return authored
    if envelope.effective_urgency == "high":
        return HIGH_DEFAULT
    return None


def _held(
    state: dict[str, Any], key: str, fallback: CapturedMonitor, now_ms: int
) -> list[Envelope]:
    batch = state.get(key)
    if not isinstance(batch, dict) or not isinstance(batch.get("observations"), list):
        return []
    envelopes = (Envelope.from_json(item, fallback, now_ms) for item in batch["observations"])
    return [envelope for envelope in envelopes if envelope is not None]


def debounce_due_ms(state: Mapping[str, Any], now_ms: int) -> int | None:
    """When a held debounce batch is due out (its ``dueAt``); None when nothing is held.

    Settle windows are stored as wall-clock instants, so the batch survives a restart.
    A held observation stamped after ``now`` means the wall clock was set back since it
    was observed (nothing is observed in the future): measured on that clock, the wait
    would be the window plus the jump (a day, for a clock set back a day). Such a batch
    is due at once, early by at most its window and never late. A clock set forward
    makes ``dueAt`` pass at once as well. A batch with an unreadable ``dueAt`` is due.
    """
    pending = state.get("pendingDebounce")
    if not isinstance(pending, dict):
        return None
    due_at = ms_from_iso(str(pending.get("dueAt", "")))
    if due_at is None:
        return now_ms
    observations = pending.get("observations")
    for item in observations if isinstance(observations, list) else ():
        observed_at = (
            ms_from_iso(str(item.get("observedAt", ""))) if isinstance(item, dict) else None
        )
        if observed_at is not None and observed_at > now_ms:
            return now_ms
    return due_at


def dispatch(
    authored: NotifyConfig | None,
    fallback: CapturedMonitor,
    envelopes: list[Envelope],
    now_ms: int,
    state: dict[str, Any],
) -> DispatchResult:
    """Decide which envelopes are emitted now and what stays held.

    ``fallback`` describes the monitor as it is now; it fills in anything a stored
    envelope lacks. ``ValueError`` when a rollup window or time zone is unusable.
    """
    state = dict(state)
    if isinstance(authored, RollupPolicy):
        state.pop("pendingDebounce", None)
        return rollup(authored, fallback, envelopes, now_ms, state)

    emitted: list[Envelope] = []
    held = _held(state, "pendingDebounce", fallback, now_ms)
    due_at = debounce_due_ms(state, now_ms)
    if due_at is not None and due_at <= now_ms:
        emitted += held
        held = []
        state.pop("pendingDebounce")

    for envelope in envelopes:
        if envelope.escalated and held:
            # An escalation releases the batch it joins, whole, ahead of itself.
            emitted += [*held, envelope]
            held = []
            state.pop("pendingDebounce", None)
            continue
        config = effective_config(authored, envelope)
        if config is None:
            emitted.append(envelope)
        elif isinstance(config, ThrottlePolicy):
            until = ms_from_iso(str(state.get("suppressedUntil", "")))
            window = duration_ms(config.suppress_for)
            # An end further away than the whole window means the wall clock was set
            # back since: the window is over, not a day longer.
            if until is not None and now_ms < until <= now_ms + window:
                continue  # dropped, not held: throttling bounds the event rate
            emitted.append(envelope)
            state["suppressedUntil"] = iso_from_ms(now_ms + window)
        elif isinstance(config, DebouncePolicy):
            held.append(envelope)
            state["pendingDebounce"] = {
                "observations": [item.to_json() for item in held],
                "dueAt": iso_from_ms(now_ms + duration_ms(config.settle_for)),
            }
    return DispatchResult(emitted, state)


def rollup(
    config: RollupPolicy,
    fallback: CapturedMonitor,
    envelopes: list[Envelope],
    now_ms: int,
    state: dict[str, Any],
) -> DispatchResult:
    """Accumulate until the window cron fires, then emit everything, one event each."""
    state = dict(state)
    held = _held(state, "pendingRollup", fallback, now_ms)
    accumulated = held + envelopes
    minute = now_ms // 60_000
    timezone = config.timezone or "UTC"
    fires = (
        cron_fires_in_minute(config.window, timezone, now_ms)
        and state.get("rollupLastFiredMinute") != minute
    ) or _window_missed(config.window, timezone, held, now_ms)
    if fires:
        state["rollupLastFiredMinute"] = minute
    if fires and accumulated:
        state.pop("pendingRollup", None)
        return DispatchResult(accumulated, state)
    if accumulated:
        state["pendingRollup"] = {"observations": [item.to_json() for item in accumulated]}
    else:
        state.pop("pendingRollup", None)
    return DispatchResult([], state)


def _window_missed(window: str, timezone: str, held: list[Envelope], now_ms: int) -> bool:
    """A window came and went while these were held: the daemon slept through it (a
    laptop asleep, a stopped process, the clock set forward).

    The batch goes out now, once, rather than a whole window late. A window that fires
    while a batch is held always releases it, so one after the oldest held observation
    and before this minute was missed.
    """
    if not held:
        return False
    oldest = min(item.observed_at_ms for item in held)
    fire = next_cron_fire_ms(window, timezone, oldest)
    return fire is not None and fire < now_ms - now_ms % 60_000


def pending_count(state: dict[str, Any]) -> int:
    """How many observations a notify state is holding."""
    total = 0
    for key in ("pendingDebounce", "pendingRollup"):
        batch = state.get(key)
        if isinstance(batch, dict) and isinstance(batch.get("observations"), list):
            total += len(batch["observations"])
    return total

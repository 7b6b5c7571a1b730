"""schedule's watch block as observing reads it, with the standard library.

The pydantic model in ``schedule/config.py`` validates and describes the block;
this module reads a validated block into :class:`ScheduleSettings` without it (see
``sources/plain_config.py``), so a tick never loads pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources import plain_config as plain


@dataclass(frozen=True)
class ScheduleSettings:
    """A validated watch block as observing reads it (the model's values, standard library)."""

    cron: str
    timezone: str
    label: str | None


def plain_config(config: Mapping[str, Any]) -> ScheduleSettings:
    """``config`` read without its model; ``Unexpected`` for anything unsure."""
    config = plain.block(config)
    if "cron" not in config:
        raise plain.Unexpected
    return ScheduleSettings(
        cron=plain.cron(config["cron"]),
        timezone=plain.absent_as(config, "timezone", "UTC", plain.timezone),
        label=plain.absent_as(config, "label", None, plain.optional_text),
    )

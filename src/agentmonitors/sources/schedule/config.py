"""schedule's config: the ``watch`` block as a pydantic model.

Loaded only to validate or to describe the block (its JSON Schema); observing reads a
validated block with the standard library (``ScheduleSettings``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, PlainValidator, WithJsonSchema

from agentmonitors.monitor.cron import timezone_is_valid
from agentmonitors.monitor.fields import CronExpression, fail, require_str
from agentmonitors.sources.base_config import SourceConfig


def _scope_timezone(value: Any) -> str:
    text = require_str(value, 'an IANA time zone name such as "UTC"')
    if not timezone_is_valid(text):
        raise fail(
            f'"{text}" is not a valid IANA time zone name (e.g. "America/New_York", "UTC").',
            "scope_timezone",
        )
    return text


ScopeTimeZone = Annotated[
    str,
    PlainValidator(_scope_timezone),
    WithJsonSchema({"type": "string", "description": 'IANA time zone, e.g. "Europe/Paris".'}),
]


class ScheduleConfig(SourceConfig):
    cron: CronExpression = Field(
        description="Five-field cron (minute hour day-of-month month day-of-week), "
        'e.g. "0 9 * * 1-5" for weekdays at 09:00.'
    )
    timezone: ScopeTimeZone = Field(default="UTC", description="Zone the cron is read in.")
    label: str | None = Field(default=None, description="Event title instead of the cron text.")

"""Reusable pydantic field types for authored values (durations, cron, zones, globs).

Each one checks the Python type itself so a wrong type gets a message that says what
was expected, and each carries the JSON Schema an editor needs.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from agentmonitors.monitor.cron import (
    TIMEZONE_MESSAGE,
    cron_problem,
    timezone_is_valid,
)
from agentmonitors.monitor.durations import (
    DURATION_MESSAGE,
    DURATION_PATTERN,
    TIMEOUT_PATTERN,
    WINDOW_MESSAGE,
    WINDOW_PATTERN,
    is_duration,
    is_window,
    timeout_problem,
)


def fail(message: str, kind: str = "am_invalid") -> PydanticCustomError:
    """An author-facing error; kinds starting ``am_`` also show the value found."""
    return PydanticCustomError(kind, "{message}", {"message": message})


def require_str(value: Any, expected: str = "a string") -> str:
    if not isinstance(value, str):
        raise fail(f"expected {expected}", "am_type")
    return value


def _duration(value: Any) -> str:
    text = require_str(value, 'a duration string such as "30s"')
    if not is_duration(text):
        raise fail(DURATION_MESSAGE, "am_duration")
    return text


def _window(value: Any) -> str:
    text = require_str(value, 'a duration string such as "2h"')
    if not is_window(text):
        raise fail(WINDOW_MESSAGE, "am_duration")
    return text


def _timeout(value: Any) -> str:
    problem = timeout_problem(value)
    if problem is not None:
        raise fail(problem, "am_timeout")
    return str(value)


def _cron(value: Any) -> str:
    text = require_str(value, 'a cron expression such as "0 9 * * 1-5"')
    problem = cron_problem(text)
    if problem is not None:
        raise fail(problem, "am_cron")
    return text


def _timezone(value: Any) -> str:
    text = require_str(value, 'an IANA time zone name such as "UTC"')
    if not timezone_is_valid(text):
        raise fail(TIMEZONE_MESSAGE, "am_timezone")
    return text


def _patterns(value: Any) -> list[str]:
    """A glob pattern or a list of them (a bare string is a one-item list)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise fail("expected a glob string or a list of glob strings", "am_type")
    if not items:
        raise fail("must contain at least one pattern", "am_empty")
    for item in items:
        if not isinstance(item, str):
            raise fail("expected every pattern to be a string", "am_type")
        if not item.strip():
            raise fail("must not contain empty patterns", "am_empty")
    return list(items)


def _optional_patterns(value: Any) -> list[str]:
    if value == []:
        return []
    return _patterns(value)


_PATTERN_SCHEMA = {"type": "string", "minLength": 1, "pattern": "\\S"}

Duration = Annotated[
    str,
    PlainValidator(_duration),
    WithJsonSchema(
        {"type": "string", "pattern": DURATION_PATTERN, "description": DURATION_MESSAGE}
    ),
]
Window = Annotated[
    str,
    PlainValidator(_window),
    WithJsonSchema({"type": "string", "pattern": WINDOW_PATTERN, "description": WINDOW_MESSAGE}),
]
Timeout = Annotated[
    str,
    PlainValidator(_timeout),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": TIMEOUT_PATTERN,
            "description": "Operation deadline: at least 1 unit, no leading zero, "
            'at most 2147483647 ms (e.g. "30s").',
        }
    ),
]
CronExpression = Annotated[
    str,
    PlainValidator(_cron),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": "^\\s*\\S+(?:\\s+\\S+){4}\\s*$",
            "description": "Five-field cron: minute hour day-of-month month day-of-week.",
        }
    ),
]
TimeZone = Annotated[
    str,
    PlainValidator(_timezone),
    WithJsonSchema({"type": "string", "minLength": 1, "description": TIMEZONE_MESSAGE}),
]
GlobPatterns = Annotated[
    list[str],
    PlainValidator(_patterns),
    WithJsonSchema(
        {
            "oneOf": [
                _PATTERN_SCHEMA,
                {"type": "array", "items": _PATTERN_SCHEMA, "minItems": 1},
            ]
        }
    ),
]
OptionalGlobPatterns = Annotated[
    list[str],
    PlainValidator(_optional_patterns),
    WithJsonSchema({"oneOf": [_PATTERN_SCHEMA, {"type": "array", "items": _PATTERN_SCHEMA}]}),
]

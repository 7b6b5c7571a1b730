"""Duration strings (``500ms``, ``30s``, ``5m``, ``1h``, ``2d``), standard library only."""

from __future__ import annotations

import re

DURATION_PATTERN = r"^\d+(ms|s|m|h|d)$"
# Operation timeouts must be at least one unit and carry no leading zero.
TIMEOUT_PATTERN = r"^[1-9]\d*(ms|s|m|h|d)$"
MAX_TIMEOUT_MS = 2_147_483_647
# A window a monitor expects change within (``expect.change-within``): a whole number of
# seconds or more, never zero, so "silent for that long" always means something.
WINDOW_PATTERN = r"^[1-9]\d*(s|m|h|d)$"
WINDOW_MESSAGE = (
    "Must be a duration of at least one second: a whole number without a leading zero "
    'and a unit of s, m, h or d (e.g. "30m", "2h", "1d")'
)

DURATION_MESSAGE = (
    'Must be a duration string: a whole number and a unit of ms, s, m, h or d (e.g. "500ms", '
    '"30s", "5m", "1h")'
)

_UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION_RE = re.compile(DURATION_PATTERN)
_TIMEOUT_RE = re.compile(TIMEOUT_PATTERN)
_WINDOW_RE = re.compile(WINDOW_PATTERN)


def is_duration(value: object) -> bool:
    return isinstance(value, str) and _DURATION_RE.fullmatch(value) is not None


def is_window(value: object) -> bool:
    """``value`` is a usable ``expect.change-within`` (see ``WINDOW_PATTERN``)."""
    return isinstance(value, str) and _WINDOW_RE.fullmatch(value) is not None


def _split(value: str) -> tuple[int, int]:
    """(number, milliseconds per unit) of a matched duration."""
    unit = "ms" if value.endswith("ms") else value[-1]
    return int(value[: -len(unit)]), _UNIT_MS[unit]


def duration_ms(value: str) -> int:
    """Milliseconds in ``value``; ``ValueError`` in the runtime's wording otherwise."""
    if not is_duration(value):
        raise ValueError(f'Invalid duration: "{value}". Expected format: <number><ms|s|m|h|d>')
    number, unit_ms = _split(value)
    return number * unit_ms


def human_floor(ms: int) -> str:
    """A floor in the largest unit that states it exactly (``10s``, ``500ms``, ``1m``)."""
    for unit in ("d", "h", "m", "s"):
        if ms >= _UNIT_MS[unit] and ms % _UNIT_MS[unit] == 0:
            return f"{ms // _UNIT_MS[unit]}{unit}"
    return f"{ms}ms"


def timeout_problem(value: object) -> str | None:
    """Why ``value`` is not a usable operation timeout, or None when it is."""
    if not isinstance(value, str):
        return f'Invalid timeout: expected a duration string such as "30s", found {value!r}'
    if not _TIMEOUT_RE.fullmatch(value):
        return (
            f'Invalid timeout: "{value}" — expected <number><ms|s|m|h|d> with no leading '
            'zero and at least 1 unit (e.g. "30s", "2m")'
        )
    number, unit_ms = _split(value)
    ms = number * unit_ms
    if ms > MAX_TIMEOUT_MS:
        return (
            f'Invalid timeout: "{value}" exceeds the maximum of {MAX_TIMEOUT_MS} ms '
            "(about 24.8 days)"
        )
    return None

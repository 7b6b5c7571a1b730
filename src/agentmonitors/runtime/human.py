"""Durations as people read them: ``2d 23h``, ``5m``, ``1m 30s``, ``250ms``.

Every message that states a duration goes through :func:`human_duration`, so the
CLI never prints ``256200s``. JSON output keeps raw numbers. A leaf module: it
imports nothing.
"""

from __future__ import annotations

_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000))


def human_duration(ms: int | float) -> str:
    """``ms`` in its two largest units, the second left out when zero.

    Below a second the milliseconds show as such (``250ms``); zero or less is ``0s``.
    What lies below the second unit is dropped (2 days 23 hours 10 minutes is
    ``2d 23h``).
    """
    total = max(0, int(ms))
    if total == 0:
        return "0s"
    if total < 1_000:
        return f"{total}ms"
    for index, (unit, size) in enumerate(_UNITS[:-1]):
        if total >= size:
            small_unit, small_size = _UNITS[index + 1]
            big, rest = divmod(total // small_size, size // small_size)
            return f"{big}{unit}" if rest == 0 else f"{big}{unit} {rest}{small_unit}"
    return f"{total // 1_000}s"


def human_wait(ms: int | float) -> str:
    """A time still to wait, rounded up to the second: ``in 400 ms`` reads as ``1s``."""
    return human_duration(-(-max(0, int(ms)) // 1_000) * 1_000)

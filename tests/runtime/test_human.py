"""Durations in messages read as people write them."""

from __future__ import annotations

import pytest

from agentmonitors.runtime.human import human_duration, human_wait


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0s"),
        (-5, "0s"),
        (250, "250ms"),
        (1_000, "1s"),
        (59_999, "59s"),
        (60_000, "1m"),
        (90_500, "1m 30s"),
        (300_000, "5m"),
        (3_600_000, "1h"),
        (5_400_000, "1h 30m"),
        (86_400_000, "1d"),
        (256_200_000, "2d 23h"),
    ],
)
def test_two_largest_units(ms: int, text: str) -> None:
    assert human_duration(ms) == text


@pytest.mark.parametrize(
    ("ms", "text"),
    [(1, "1s"), (400, "1s"), (4_001, "5s"), (59_500, "1m"), (3_599_500, "1h"), (0, "0s")],
)
def test_a_wait_rounds_up_to_the_second(ms: int, text: str) -> None:
    # "next due in 0s" for a monitor due in 400 ms would announce a tick that does nothing.
    assert human_wait(ms) == text

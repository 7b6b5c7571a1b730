"""The daemon hands memory it freed back to the system, at most once per period."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from agentmonitors.daemon.heap import TRIM_PERIOD_S, HeapTrimmer, c_library_trim


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_work_trims_and_then_once_a_period() -> None:
    clock, calls = Clock(), []
    trimmer = HeapTrimmer(clock=clock, trim=lambda: calls.append(clock.now) is None)
    assert trimmer.after_work()
    clock.now += TRIM_PERIOD_S - 1
    assert not trimmer.after_work()
    clock.now += 1
    assert trimmer.after_work()
    clock.now += 10
    assert not trimmer.after_work()
    assert calls == [1000.0, 1000.0 + TRIM_PERIOD_S]
    assert trimmer.trims == 2


def test_without_a_trim_in_the_c_library_nothing_is_done() -> None:
    trimmer = HeapTrimmer(use_c_library=False)
    assert not trimmer.available
    assert not trimmer.after_work()
    assert trimmer.trims == 0


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or c_library_trim() is None,
    reason="malloc_trim is glibc's; elsewhere the daemon does nothing",
)
def test_a_trim_returns_the_free_holes_of_the_heap() -> None:
    # 64 MiB in 2 KiB blocks (above pymalloc's size, so glibc's heap), every block but
    # the last freed: the heap's top stays in use, so glibc keeps the holes below it.
    blocks = [bytearray(2048) for _ in range(32 * 1024)]
    keep = blocks[-1]
    del blocks
    gc.collect()
    before = _rss_kib()
    trimmer = HeapTrimmer()
    assert trimmer.available
    assert trimmer.after_work()
    after = _rss_kib()
    assert before - after > 32 * 1024, (before, after)
    assert len(keep) == 2048

"""Polling for a condition that a real process brings about, and watching one asleep."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, step: float = 0.05) -> Any:
    """The first truthy value ``predicate`` returns; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"condition not met within {timeout}s")


WINDOW_S = 2.0
"""How long a process is watched asleep: long enough that a once-a-second beat shows twice."""


def switches(pid: int, *, main_thread_only: bool = False) -> int:
    """Voluntary context switches (times it went to sleep) of ``pid``'s threads."""
    tasks = [str(pid)] if main_thread_only else os.listdir(f"/proc/{pid}/task")
    total = 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return total


def asleep_for_a_window(pid: int, *, main_thread_only: bool = False) -> int:
    before = switches(pid, main_thread_only=main_thread_only)
    time.sleep(WINDOW_S)
    return switches(pid, main_thread_only=main_thread_only) - before

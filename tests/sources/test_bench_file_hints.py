"""CI's short run of benchmarks/bench_file_hints.py: it runs, every write is hinted, and
the event-driven backend does not poll (a count of wakeups, not a time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_file_hints.py"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_the_short_run_hints_every_write_and_inotify_does_not_poll() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[2:-1]}
    assert set(rows) == {"inotify", "watchfiles"}, done.stdout
    # watchfiles wakes ~40 times a second; inotify only for the writes, none while idle.
    assert float(rows["inotify"][0]) < 5, done.stdout

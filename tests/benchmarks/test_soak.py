"""The soak benchmark's short run (CI's version of the hour): its invariants, never its times.

``benchmarks/bench_soak.py --minutes 2`` drives a real daemon with 20 monitors over all
five sources and three sessions delivering and acknowledging. Whatever the machine's
speed, every event produced reaches every session exactly once, every source produced
events, no hook fails and the daemon's descriptors stay flat after the warm-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_soak.py"
SOURCES = {"file-fingerprint", "command-poll", "api-poll", "schedule", "incoming-changes"}


@pytest.mark.slow
@pytest.mark.timeout(480)
def test_a_short_soak_loses_nothing_and_delivers_nothing_twice(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--minutes", "2", "--warmup-minutes", "0.5", "--json"],
        capture_output=True,
        text=True,
        timeout=450,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for session in result["sessions"]:
        assert session["lostCount"] == 0, session
        assert session["twiceCount"] == 0, session
        assert session["delivered"] == session["produced"] > 0, session
    assert result["nothingLost"] and result["nothingTwice"]
    assert set(result["producedBySource"]) == SOURCES, result["producedBySource"]
    assert result["hookFailures"] == 0
    assert result["cliErrors"] == []
    # The steady endpoint is asked conditionally: its 304s cost it no body.
    assert result["apiNotModified"] > 0
    assert result["flat"]["fds"], result["reports"]

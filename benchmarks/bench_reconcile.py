"""Time file-fingerprint reconciles over 10,000 unchanged files.

Builds ``src/d000..d099/f000..f099.txt`` in a temporary folder, waits until the files
are settled (so their stored stat keys may be trusted), baselines once, then times N
reconciles of ``src/**/*.txt``, each by a fresh source instance as a new ``daemon
once`` process would be, and prints the median and p95 in milliseconds.

    .venv/bin/python benchmarks/bench_reconcile.py [N]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.observation import ObservationContext

DIRS = 100
FILES_PER_DIR = 100


def build(root: Path) -> None:
    old = time.time() - 3600
    for d in range(DIRS):
        folder = root / "src" / f"d{d:03}"
        folder.mkdir(parents=True)
        for f in range(FILES_PER_DIR):
            path = folder / f"f{f:03}.txt"
            path.write_text(f"file {d}/{f}\n" * 20)
            os.utime(path, (old, old))


async def run(runs: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        build(root)
        # A file written (or touched) within 2 s of its hash is re-read until it
        # settles; wait that out, as a real tree of unchanged files has.
        time.sleep(2.1)
        source = FileFingerprintSource()
        config = {"globs": "src/**/*.txt"}

        def context(state: object) -> ObservationContext:
            return ObservationContext(
                previous_state=state,
                now_ms=int(time.time() * 1000),
                workspace_path=str(root),
                monitor_id="bench",
            )

        started = time.perf_counter()
        baseline = await source.observe(config, context(None))
        baseline_ms = (time.perf_counter() - started) * 1000
        files = len(baseline.next_state["fingerprints"])
        timings: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            fresh = FileFingerprintSource()
            result = await fresh.observe(config, context(baseline.next_state))
            timings.append((time.perf_counter() - started) * 1000)
            assert not result.observations, result.observations[:3]
        timings.sort()
        p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
        print(f"files matched:      {files}")
        print(f"baseline (hashing): {baseline_ms:.1f} ms")
        print(
            f"reconcile x{runs}:      median {statistics.median(timings):.1f} ms, "
            f"p95 {p95:.1f} ms, min {timings[0]:.1f} ms, max {timings[-1]:.1f} ms"
        )


if __name__ == "__main__":
    asyncio.run(run(int(sys.argv[1]) if len(sys.argv) > 1 else 20))

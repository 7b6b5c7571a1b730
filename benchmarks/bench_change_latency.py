"""Change → event row latency for a file-fingerprint monitor with default settings.

Run: .venv/bin/python benchmarks/bench_change_latency.py [rounds]
The daemon runs with its defaults (30 s ticks, 30 s interval); the figure is the
time from a file write returning to the event row being readable in SQLite.
"""

from __future__ import annotations

import statistics
import sys
import time

from _daemon import BenchDaemon, percentile


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    bench = BenchDaemon({"notes": "watch:\n  type: file-fingerprint\n  globs: 'notes/*.txt'\n"})
    (bench.root / "notes").mkdir()
    note = bench.root / "notes" / "a.txt"
    note.write_text("0\n")
    try:
        bench.start()
        time.sleep(0.5)
        latencies: list[float] = []
        for index in range(1, rounds + 1):
            before = bench.count("monitor_events")
            start = time.perf_counter()
            note.write_text(f"{index}\n")
            while bench.count("monitor_events") == before:
                if time.perf_counter() - start > 60:
                    raise RuntimeError("no event within 60 s")
                time.sleep(0.005)
            latencies.append((time.perf_counter() - start) * 1000)
            time.sleep(0.3)
        print(f"change -> event row, {rounds} rounds (default settings)")
        print(f"  median {statistics.median(latencies):7.1f} ms")
        print(f"  p95    {percentile(latencies, 0.95):7.1f} ms")
        print(f"  max    {max(latencies):7.1f} ms")
    finally:
        bench.close()


if __name__ == "__main__":
    main()

"""The plugin's follower: write → line latency, and a burst of 100 changes.

Run: .venv/bin/python benchmarks/bench_plugin_follow.py [rounds]
A real daemon with its defaults, a session opened by the real ``session start`` hook,
and ``events follow`` started as the plugin's ``monitors`` entry starts it (in the
project, ``CLAUDE_CODE_SESSION_ID`` in its environment, no flag).

1. Latency: each round writes a normal-urgency note and times until the line is read,
   then acknowledges. Rounds are 2.5 s apart, slower than the host's refill (one line
   per 2 s), so the pace never holds a line back. Target: median < 50 ms.
2. Burst: 100 notes of a normal monitor change, 0.1 s apart, and each line is
   acknowledged as soon as it is read (as an agent handling it would), so the follower
   has something new to say ten times a second; lines are read with their times until
   10 s pass without one. Claude Code accepts 10 lines at once, then one per 2 s: the
   lines must fit that bucket (at most 40 in a minute), and every event must have been
   delivered, none left unread. Prints figures, asserts nothing.
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from _daemon import BenchDaemon, percentile

from agentmonitors.transports.follow_pace import host_accepts

HOST = "5e0c3b7e-bench-plugin-follow"
BURST = 100


class Follower:
    """The plugin's follower, its lines queued with the time each was read."""

    def __init__(self, bench: BenchDaemon) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentmonitors", "events", "follow"],
            cwd=bench.root,
            env={**bench.env, "CLAUDE_CODE_SESSION_ID": HOST},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put((time.perf_counter(), line))

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def ack_each_line(
    bench: BenchDaemon, session_id: str, follower: Follower, read: list[tuple[float, str]]
) -> None:
    """Read lines until 10 s pass without one, acknowledging each as it comes."""
    while True:
        try:
            read.append(follower.lines.get(timeout=10))
        except queue.Empty:
            return
        bench.cli("events", "ack", "--session", session_id)


def latency(rounds: int) -> None:
    bench = BenchDaemon(
        {"notes": "watch:\n  type: file-fingerprint\n  globs: 'notes/*.txt'\nurgency: normal\n"}
    )
    (bench.root / "notes").mkdir()
    note = bench.root / "notes" / "a.txt"
    note.write_text("0\n")
    follower: Follower | None = None
    try:
        bench.start()
        session_id = bench.open_session(HOST)
        follower = Follower(bench)
        time.sleep(2.0)
        latencies: list[float] = []
        for index in range(1, rounds + 1):
            start = time.perf_counter()
            note.write_text(f"{index}\n")
            read_at, _line = follower.lines.get(timeout=60)
            latencies.append((read_at - start) * 1000)
            bench.cli("events", "ack", "--session", session_id)
            time.sleep(max(0.0, 2.5 - (time.perf_counter() - start)))
        print(f"file write -> plugin follower line, {rounds} rounds (normal urgency, defaults)")
        print(f"  median {statistics.median(latencies):7.1f} ms   (target < 50 ms)")
        print(f"  p95    {percentile(latencies, 0.95):7.1f} ms")
        print(f"  max    {max(latencies):7.1f} ms")
    finally:
        if follower is not None:
            follower.close()
        bench.close()


def burst() -> None:
    bench = BenchDaemon(
        {"notes": "watch:\n  type: file-fingerprint\n  globs: 'notes/*.txt'\nurgency: normal\n"}
    )
    notes = bench.root / "notes"
    notes.mkdir()
    for index in range(BURST):
        (notes / f"n{index:03d}.txt").write_text("0\n")
    follower: Follower | None = None
    try:
        bench.start()
        session_id = bench.open_session(HOST)
        follower = Follower(bench)
        time.sleep(2.0)
        read: list[tuple[float, str]] = []
        acker = threading.Thread(target=ack_each_line, args=(bench, session_id, follower, read))
        acker.start()
        for index in range(BURST):
            scratch = notes / f".n{index:03d}.partial"
            scratch.write_text("1\n")
            os.replace(scratch, notes / f"n{index:03d}.txt")
            time.sleep(0.1)
        acker.join()
        listed = bench.cli("events", "list", "--session", session_id, "--format", "json")
        states = [event["deliveryState"] for event in json.loads(listed)]
        delivered = len(states) - states.count("unread")
        times = [moment for moment, _line in read]
        busiest = max(sum(1 for t in times if start <= t < start + 60) for start in times)
        span = times[-1] - times[0]
        print(f"burst: {BURST} notes changed 0.1 s apart, {len(states)} events stored")
        print(
            f"  lines: {len(read)} over {span:.0f} s, at most {busiest} in any minute"
            " (host limit 40)"
        )
        print(f"  within the host's bucket (10, one per 2 s): {host_accepts(times)}")
        print(
            f"  events per line: {delivered / max(1, len(read)):.1f}; delivered:"
            f" {delivered}, left unread: {states.count('unread')}"
        )
    finally:
        if follower is not None:
            follower.close()
        bench.close()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    latency(rounds)
    burst()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()

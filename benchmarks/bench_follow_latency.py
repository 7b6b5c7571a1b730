"""File write → delivery line on the stdout of ``events follow`` (normal urgency).

Run: .venv/bin/python benchmarks/bench_follow_latency.py [rounds] [--stored]
A real daemon with its defaults, a session opened by the real ``session start`` hook,
and one ``events follow`` process; each round writes the note, reads the line, then
acknowledges so the next round starts from nothing unread. Rounds start 2.5 s apart:
the follower writes at most one line per 2.2 s once its burst of 8 is spent (within
Claude Code's limit, see ``bench_plugin_follow.py``), and faster rounds would time that
pace instead. Target: median < 50 ms on a quiet machine.

``--stored`` measures the part after the file watcher instead: a command monitor
(``interval: 1s``) reads the note and stamps the moment it runs; the figure is that
moment -> the line (the command's exit, the store, the daemon's push to the follower,
its reserve and write), without the watcher's own delay.
"""

from __future__ import annotations

import selectors
import statistics
import subprocess
import sys
import time

from _daemon import BenchDaemon, percentile

HOST = "bench-follow"


STAMPING = (
    "import pathlib, time; pathlib.Path('ran').write_text(repr(time.time()));"
    " print(pathlib.Path('notes/a.txt').read_text())"
)


def main() -> None:
    stored = "--stored" in sys.argv
    numbers = [arg for arg in sys.argv[1:] if arg != "--stored"]
    rounds = int(numbers[0]) if numbers else 20
    monitor = "watch:\n  type: file-fingerprint\n  globs: 'notes/*.txt'\nurgency: normal\n"
    if stored:
        command = f"['{sys.executable}', -c, \"{STAMPING}\"]"
        monitor = f"watch:\n  type: command-poll\n  command: {command}\n  interval: 1s\n"
    bench = BenchDaemon({"notes": monitor})
    (bench.root / "notes").mkdir()
    note = bench.root / "notes" / "a.txt"
    note.write_text("0\n")
    follow: subprocess.Popen[bytes] | None = None
    try:
        if stored:
            bench.cli("monitor", "approve", "--yes", "notes")
        bench.start()
        session_id = bench.open_session(HOST)
        follow = subprocess.Popen(
            [sys.executable, "-m", "agentmonitors", "events", "follow", "--session", session_id],
            cwd=bench.root,
            env=bench.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert follow.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(follow.stdout, selectors.EVENT_READ)
        time.sleep(1.0)
        latencies: list[float] = []
        for index in range(1, rounds + 1):
            start = time.perf_counter()
            note.write_text(f"{index}\n")
            if not selector.select(timeout=60):
                raise RuntimeError("no delivery line within 60 s")
            follow.stdout.readline()
            if stored:
                ran = float((bench.root / "ran").read_text())
                latencies.append((time.time() - ran) * 1000)
            else:
                latencies.append((time.perf_counter() - start) * 1000)
            bench.cli("events", "ack", "--session", session_id)
            time.sleep(max(0.3, 2.5 - (time.perf_counter() - start)))
        what = "command run (stored)" if stored else "file write"
        print(f"{what} -> events follow line, {rounds} rounds (normal urgency, defaults)")
        print(f"  median {statistics.median(latencies):7.1f} ms")
        print(f"  p95    {percentile(latencies, 0.95):7.1f} ms")
        print(f"  max    {max(latencies):7.1f} ms")
    finally:
        if follow is not None:
            follow.terminate()
            follow.wait(10)
        bench.close()


if __name__ == "__main__":
    main()

"""Memory a daemon spends hashing a 300 MiB file that a file-fingerprint glob matches.

A real daemon watches ``data/*.bin``; once it idles, a real 300 MiB sparse file
appears there. The figures come from the daemon process's /proc status: resident
memory (VmRSS) idle and after, and its peak (VmHWM) before and after the change.
The file is hashed in chunks and, being over the snapshot cap, its text is never
held whole, so the peak should rise by a few MiB, not by the file's size.

Run: .venv/bin/python benchmarks/bench_large_file_memory.py
"""

from __future__ import annotations

import time
from pathlib import Path

from _daemon import BenchDaemon

SIZE = 300 * 1024 * 1024
MONITOR = "watch:\n  type: file-fingerprint\n  globs: 'data/*.bin'\n  interval: 5s\n"


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def mib(kib: int) -> str:
    return f"{kib / 1024:6.1f} MiB"


def main() -> None:
    bench = BenchDaemon({"big": MONITOR})
    data = bench.root / "data"
    data.mkdir()
    (data / "big.bin").write_bytes(b"small\n")
    try:
        bench.start()
        assert bench.process is not None
        pid = bench.process.pid
        time.sleep(3)
        idle_rss = status_kib(pid, "VmRSS")
        idle_peak = status_kib(pid, "VmHWM")
        # Sparse: the size is real to every reader, the blocks are never written.
        with open(data / "big.bin", "r+b") as handle:
            handle.truncate(SIZE)
        started = time.monotonic()
        deadline = started + 60
        while not bench.count("monitor_events"):
            if time.monotonic() > deadline:
                raise RuntimeError("the daemon did not report the change within 60 s")
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        time.sleep(1)
        after_rss = status_kib(pid, "VmRSS")
        after_peak = status_kib(pid, "VmHWM")
        print(f"daemon memory, one file-fingerprint monitor, a {SIZE // 1024 // 1024} MiB file")
        print(f"  idle      VmRSS {mib(idle_rss)}  peak so far (VmHWM) {mib(idle_peak)}")
        print(f"  after     VmRSS {mib(after_rss)}  peak (VmHWM) {mib(after_peak)}")
        print(f"  peak rise {mib(after_peak - idle_peak)} (change reported in {elapsed:.1f} s)")
    finally:
        bench.close()


if __name__ == "__main__":
    main()

"""Resident memory of a daemon running 20 idle file-fingerprint monitors.

Run: .venv/bin/python benchmarks/bench_daemon_memory.py
"""

from __future__ import annotations

import time

from _daemon import BenchDaemon


def main() -> None:
    monitors = {
        f"m{index:02d}": f"watch:\n  type: file-fingerprint\n  globs: 'area{index:02d}/**/*.md'\n"
        for index in range(20)
    }
    bench = BenchDaemon(monitors)
    for index in range(20):
        folder = bench.root / f"area{index:02d}" / "docs"
        folder.mkdir(parents=True)
        for number in range(25):
            (folder / f"page{number}.md").write_text(f"page {number}\n" * 20)
    try:
        bench.start()
        time.sleep(3)
        samples = []
        for _ in range(5):
            samples.append(bench.rss_kib())
            time.sleep(1)
        print("daemon resident memory, 20 idle file-fingerprint monitors (500 files)")
        print(f"  VmRSS {max(samples) / 1024:6.1f} MiB (max of 5 samples over 5 s)")
    finally:
        bench.close()


if __name__ == "__main__":
    main()

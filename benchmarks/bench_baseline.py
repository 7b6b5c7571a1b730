"""The first baseline of one file-fingerprint monitor over 10k to 300k files.

Run: .venv/bin/python benchmarks/bench_baseline.py [--sizes 10000,100000,300000]
     [--rounds 5] [--root /tmp]
Short mode (CI): --sizes 1000,3000 --rounds 2

For each size it builds the tree ``bench_scale.py`` builds (``src/mNN/pN/qN/fNNN.txt``,
100 files a folder, settled), one monitor over ``src/**/*.txt``, and runs
``agentmonitors daemon once`` on a fresh store ``--rounds`` times (the store is removed
before each; the tree stays, so the page cache is warm as it is for a tree just
checked out). It prints, as medians: the wall time (goal at 100k: < 3 s), the
process's CPU seconds (user + system, from ``wait4``: what a loaded machine does not
inflate), its peak RSS, and CPU per 1,000 files, whose growth from the smallest size
to the largest is the curve's shape (goal: no worse than linear, a ratio <= 1.0 with
10 % for noise). Then what the baseline stored: snapshot rows, baseline packs and
the database's size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_commands import SCRIPT, clean_env, db_path_of, run, write_monitor  # sibling scripts
from bench_scale import build_tree

GOAL_100K_S = 3.0
LINEAR_SLACK = 1.10


def once(project: str, env: dict[str, str]) -> tuple[float, float, float]:
    """One ``daemon once``: wall seconds, CPU seconds, peak RSS in MiB."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [SCRIPT, "daemon", "once"],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    assert process.stderr is not None
    error = process.stderr.read()
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"daemon once exited {process.returncode}: {error!r}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def stored(db: str) -> dict[str, int]:
    conn = sqlite3.connect(db)
    counts: dict[str, int] = {}
    try:
        for table in ("monitor_snapshots", "monitor_baseline_packs"):
            try:
                counts[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            except sqlite3.OperationalError:  # a version from before packs
                counts[table] = 0
    finally:
        conn.close()
    counts["db_mib"] = sum(
        os.path.getsize(db + tail) for tail in ("", "-wal") if os.path.exists(db + tail)
    ) // (1024 * 1024)
    return counts


def point(base: str, files: int, rounds: int) -> dict[str, float]:
    project = os.path.join(base, f"ws{files}")
    home = os.path.join(base, f"home{files}")
    os.makedirs(project)
    os.makedirs(home)
    env = clean_env(home)
    build_tree(project, files)
    write_monitor(project, "tree", "watch:\n  type: file-fingerprint\n  globs: 'src/**/*.txt'\n")
    run([SCRIPT, "init", "--enable-only"], env, cwd=project)
    db = db_path_of(env, project)
    walls: list[float] = []
    cpus: list[float] = []
    rss: list[float] = []
    counts: dict[str, int] = {}
    for _ in range(rounds):
        shutil.rmtree(os.path.dirname(db), ignore_errors=True)
        wall, cpu, peak = once(project, env)
        walls.append(wall)
        cpus.append(cpu)
        rss.append(peak)
        counts = stored(db)
    shutil.rmtree(project)
    shutil.rmtree(home)
    return {
        "wall_s": statistics.median(walls),
        "wall_min_s": min(walls),
        "cpu_s": statistics.median(cpus),
        "rss_mib": statistics.median(rss),
        **{key: float(value) for key, value in counts.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", default=None)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    base = tempfile.mkdtemp(prefix="am-baseline-", dir=args.root)
    figures: dict[int, dict[str, float]] = {}
    try:
        for files in sizes:
            figures[files] = point(base, files, args.rounds)
            print(f"  {files} files done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"first baseline, `daemon once` on a fresh store, median of {args.rounds}")
    print(
        f"{'files':>7} {'wall s':>7} {'min s':>6} {'CPU s':>6} {'CPU ms/1k':>9}"
        f" {'RSS MiB':>8} {'rows':>7} {'packs':>6} {'db MiB':>6}"
    )
    for files, got in figures.items():
        print(
            f"{files:>7} {got['wall_s']:>7.2f} {got['wall_min_s']:>6.2f} {got['cpu_s']:>6.2f}"
            f" {1000 * got['cpu_s'] / files * 1000:>9.1f} {got['rss_mib']:>8.1f}"
            f" {int(got['monitor_snapshots']):>7} {int(got['monitor_baseline_packs']):>6}"
            f" {int(got['db_mib']):>6}"
        )
    if 100_000 in figures:
        wall = figures[100_000]["wall_s"]
        verdict = "PASS" if wall < GOAL_100K_S else "MISS"
        print(f"baseline at 100k: {wall:.2f} s wall (goal < {GOAL_100K_S:g} s)  {verdict}")
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        ratio = (figures[large]["cpu_s"] / large) / (figures[small]["cpu_s"] / small)
        verdict = "PASS" if ratio <= LINEAR_SLACK else "MISS"
        print(
            f"CPU per file at {large} / at {small}: {ratio:.2f}"
            f" (goal <= {LINEAR_SLACK:.2f}: no worse than linear)  {verdict}"
        )


if __name__ == "__main__":
    main()

"""The scale curve: one file-fingerprint monitor over 1k to 300k files, and 200 monitors.

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 1000,10000,100000,300000]
     [--rounds 20] [--monitors 20,200] [--root /tmp]
Short mode (CI): --sizes 1000 --rounds 3 --monitors 5,10

For each size it builds a tree with git-like depth (``src/mNN/pN/qN/fNNN.txt``,
100 files a folder, files dated an hour back so their stat keys are settled), one
monitor over ``src/**/*.txt``, and measures:

- the first baseline: ``agentmonitors daemon once`` on a fresh store (whole process);
- ``daemon once`` with nothing changed, and after one file changed (whole process,
  median of rounds; the monitor is marked due before each), and the most CPU seconds
  one of them took (the figure a loaded machine does not inflate). The "nothing changed" tick
  follows the last round's change within the 2 s racy window, so it hashes that file
  again and stores its now settled stat key: it reads the stored state, as a tick of a
  tree settled for longer would not (that one is a walk and nothing else);
- in the running daemon (file events on): change -> event row p50/p95 for one
  changed file, and the daemon's RSS after those rounds; the daemon's CPU seconds per
  change (from /proc), which says whether one change costs a pass over the tree.

Then ``--monitors A,B``: one project of 2,000 files in folders, watched by A and then
by B monitors (each over its own folder: 100 files each for 20, 10 for 200), so the
ratio shows what each monitor costs, not what more files cost; ``hook deliver``
(UserPromptSubmit, nothing pending, a running daemon) and ``daemon once`` (every
monitor due) for each, and the ratio B/A (goal: within 2x).

Each figure is printed next to its goal; times are wall medians of several runs, CPU
figures from /proc. Every tree lives under ``--root`` and is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _daemon import percentile  # a sibling script, not a package
from bench_commands import (
    SCRIPT,
    clean_env,
    db_path_of,
    make_due,
    prompt_payload,
    run,
    start_session,
    write_monitor,
)

FILES_PER_FOLDER = 100
GOALS_AT_100K = {
    "baseline_s": 3.0,
    "p95_ms": 200.0,
    "rss_mib": 150.0,
    "tick_max_s": 1.0,
    "tick_cpu_max_s": 1.0,
}


def build_tree(root: str, files: int) -> list[str]:
    """``files`` settled files in folders of 100, four levels deep; their paths."""
    old = time.time() - 3600
    paths: list[str] = []
    folders = max(1, files // FILES_PER_FOLDER)
    for leaf in range(folders):
        folder = os.path.join(
            root, "src", f"m{leaf // 256:02}", f"p{(leaf // 16) % 16:x}", f"q{leaf % 16:x}"
        )
        os.makedirs(folder, exist_ok=True)
        for index in range(min(FILES_PER_FOLDER, files - leaf * FILES_PER_FOLDER)):
            path = os.path.join(folder, f"f{index:03}.txt")
            with open(path, "w") as handle:
                handle.write(f"file {leaf}/{index}\n" * 8)
            os.utime(path, (old, old))
            paths.append(path)
    return paths


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_once(run_once: Callable[[], object], cpu: list[float]) -> float:
    """The wall time of one ``daemon once``; its CPU seconds (user + system, from the
    kernel's count for waited-for children) go to ``cpu``: on a shared machine the
    wall time carries the other processes' load, the CPU time does not."""
    before = children_cpu_s()
    wall = timed(run_once)
    cpu.append(children_cpu_s() - before)
    return wall


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


class Daemon:
    """A running ``daemon run`` of a project, with its /proc figures."""

    def __init__(self, project: str, env: dict[str, str], db: str) -> None:
        self.project, self.env, self.db = project, env, db
        history = self.count("observation_history")
        self.process = subprocess.Popen(
            [SCRIPT, "daemon", "run", "--workspace", project, "--reap-after-ms", "0"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # The first tick reconciles every file monitor (changes made while no daemon ran).
        self.wait(lambda: self.count("observation_history") > history, 600)

    def count(self, table: str) -> int:
        conn = sqlite3.connect(self.db, timeout=30)
        try:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        except sqlite3.OperationalError:
            return 0
        finally:
            conn.close()

    @staticmethod
    def wait(condition: Callable[[], bool], limit_s: float) -> None:
        deadline = time.monotonic() + limit_s
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError("the daemon did not get there in time")
            time.sleep(0.002)

    def rss_mib(self, field: str = "VmRSS") -> float:
        """The resident size (or its high-water mark, ``VmHWM``) in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no {field}")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


def curve_point(base: str, files: int, rounds: int) -> dict[str, float]:
    project = os.path.join(base, f"ws{files}")
    home = os.path.join(base, f"home{files}")
    os.makedirs(project)
    os.makedirs(home)
    env = clean_env(home)
    paths = build_tree(project, files)
    write_monitor(project, "tree", "watch:\n  type: file-fingerprint\n  globs: 'src/**/*.txt'\n")
    run([SCRIPT, "init", "--enable-only"], env, cwd=project)
    figures: dict[str, float] = {}
    figures["baseline_s"] = timed(lambda: run([SCRIPT, "daemon", "once"], env, cwd=project))
    due = make_due(db_path_of(env, project))
    unchanged: list[float] = []
    one: list[float] = []
    cpu: list[float] = []

    def once() -> None:
        run([SCRIPT, "daemon", "once"], env, cwd=project)

    for index in range(max(3, rounds // 4)):
        due()
        unchanged.append(timed_once(once, cpu))
        Path(paths[index * 7919 % len(paths)]).write_text(f"once {index}\n")
        due()
        one.append(timed_once(once, cpu))
    figures["tick_unchanged_s"] = median(unchanged)
    figures["tick_one_changed_s"] = median(one)
    figures["tick_max_s"] = max(unchanged + one)
    figures["tick_cpu_max_s"] = max(cpu)

    daemon = Daemon(project, env, db_path_of(env, project))
    try:
        time.sleep(0.5)
        latencies: list[float] = []
        cpu_before = daemon.cpu_s()
        for index in range(rounds):
            before = daemon.count("monitor_events")
            path = Path(paths[(index * 104729 + 13) % len(paths)])
            started = time.perf_counter()
            path.write_text(f"live {index}\n")
            daemon.wait(lambda before=before: daemon.count("monitor_events") > before, 60)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.25)
        # The waits poll SQLite from this process, not the daemon: its CPU is its own.
        figures["cpu_per_change_ms"] = (daemon.cpu_s() - cpu_before) / rounds * 1000
        figures["p50_ms"] = median(latencies)
        figures["p95_ms"] = percentile(latencies, 0.95)
        figures["rss_mib"] = daemon.rss_mib()
        figures["hwm_mib"] = daemon.rss_mib("VmHWM")
    finally:
        daemon.close()
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    return figures


PROJECT_FILES = 2_000


def monitors_point(base: str, count: int, rounds: int) -> dict[str, float]:
    project = os.path.join(base, f"many{count}")
    home = os.path.join(base, f"manyhome{count}")
    os.makedirs(home)
    for monitor in range(count):
        folder = os.path.join(project, "mods", f"m{monitor:03}")
        os.makedirs(folder)
        for index in range(max(1, PROJECT_FILES // count)):
            Path(folder, f"f{index:02}.txt").write_text(f"{monitor}/{index}\n")
        write_monitor(
            project,
            f"m{monitor:03}",
            f"watch:\n  type: file-fingerprint\n  globs: 'mods/m{monitor:03}/*.txt'\n",
        )
    env = clean_env(home)
    run([SCRIPT, "init", "--enable-only"], env, cwd=project)
    run([SCRIPT, "daemon", "once"], env, cwd=project)  # the baselines
    time.sleep(2.1)  # let every file settle, as a long-lived tree's have
    due = make_due(db_path_of(env, project))
    ticks: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        due()
        ticks.append(timed_once(lambda: run([SCRIPT, "daemon", "once"], env, cwd=project), cpu))
    host = f"scale-{count}"
    start_session(env, project, host)
    payload = prompt_payload(host, project)
    hooks = [
        timed(lambda: run([SCRIPT, "hook", "deliver"], env, payload, cwd=project))
        for _ in range(rounds)
    ]
    run([SCRIPT, "daemon", "stop"], env, cwd=project)
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    return {"tick_s": median(ticks), "tick_cpu_s": median(cpu), "hook_ms": median(hooks) * 1000}


def verdict(value: float, goal: float) -> str:
    return "ok" if value < goal else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,300000")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--monitors", default="20,200")
    parser.add_argument("--root", default=tempfile.gettempdir())
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    counts = [int(count) for count in args.monitors.split(",") if count]
    base = tempfile.mkdtemp(prefix="am-scale-", dir=args.root)
    try:
        curve: dict[int, dict[str, float]] = {}
        print(
            f"{'files':>7} {'baseline s':>10} {'once idle s':>11} {'once 1 chg s':>12}"
            f" {'p50 ms':>7} {'p95 ms':>7} {'cpu/chg ms':>10} {'RSS MiB':>8}"
        )
        for files in sizes:
            point = curve_point(base, files, args.rounds)
            curve[files] = point
            print(
                f"{files:>7} {point['baseline_s']:>10.2f} {point['tick_unchanged_s']:>11.2f}"
                f" {point['tick_one_changed_s']:>12.2f} {point['p50_ms']:>7.0f}"
                f" {point['p95_ms']:>7.0f} {point['cpu_per_change_ms']:>10.1f}"
                f" {point['rss_mib']:>8.1f}",
                flush=True,
            )
        at = curve.get(100_000)
        if at is not None:
            print("goals at 100k files:")
            for label, key, unit in (
                ("first baseline", "baseline_s", "s"),
                ("change->event p95", "p95_ms", "ms"),
                ("RSS", "rss_mib", "MiB"),
                ("slowest daemon once tick", "tick_max_s", "s"),
                ("slowest daemon once tick, CPU", "tick_cpu_max_s", "s"),
            ):
                goal, value = GOALS_AT_100K[key], at[key]
                print(f"  {label} {value:.2f} {unit}  (< {goal:g} {unit}) {verdict(value, goal)}")
            print(f"  (the daemon's RSS high-water mark: {at['hwm_mib']:.1f} MiB)")
        if 10_000 in curve and 300_000 in curve:
            low, high = curve[10_000], curve[300_000]
            for key in ("baseline_s", "tick_unchanged_s", "tick_one_changed_s", "rss_mib"):
                ratio = high[key] / low[key]
                print(
                    f"  10k -> 300k {key}: x{ratio:.1f}  (linear: <= x30) {verdict(ratio, 30.01)}"
                )
        if len(counts) == 2:
            low_count, high_count = counts
            low = monitors_point(base, low_count, max(3, args.rounds // 2))
            high = monitors_point(base, high_count, max(3, args.rounds // 2))
            print(f"{high_count} monitors vs {low_count} ({PROJECT_FILES} files), medians:")
            for key, unit in (("hook_ms", "ms"), ("tick_s", "s"), ("tick_cpu_s", "s")):
                ratio = high[key] / low[key]
                print(
                    f"  {key}: {low[key]:.3f} {unit} -> {high[key]:.3f} {unit}"
                    f"  x{ratio:.2f}  (goal <= x2) {verdict(ratio, 2.0001)}"
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Where the time of ``daemon once`` over 10,000 unchanged files goes.

Run: .venv/bin/python benchmarks/bench_daemon_once.py [rounds]   (default 15)

Builds the workspace ``bench_commands.py`` times (``init --enable-only``, one
file-fingerprint monitor over ``src/**/*.txt`` with ``interval: 1s``, 100 folders of
100 settled files, one baseline run), then, each round, marks the monitor due and runs

- the floor: a bare ``python -c pass``;
- ``agentmonitors daemon once`` as a whole process (the figure with the 150 ms target);
- the same tick in a fresh interpreter that times each phase: the imports the command
  needs, opening the database, loading the definitions, the monitor's state row (the
  source state itself is read only when the state token differs), the glob walk, the
  ``stat`` of every matched file, the state token, the rest of observing (reading the
  config and compiling the globs; on a change, reading and comparing the stored state),
  writing back (state row and history) and the rest of the tick.

Medians over the rounds; the machine's noise hits every case alike, as they alternate.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_commands import (  # a sibling script, not a package
    FILE_MONITOR,
    SCRIPT,
    build_tree,
    clean_env,
    db_path_of,
    make_due,
    run,
    wrapper_note,
    write_monitor,
)

# The tick of ``daemon once`` (``cli/tick_once.run_once``), phase by phase. Each phase
# is timed by wrapping the function that does it; the wrappers cost microseconds.
PHASES = r"""
import time
started = time.perf_counter()
marks = {}

def note(name, since):
    marks[name] = marks.get(name, 0.0) + (time.perf_counter() - since) * 1000

from agentmonitors.cli.tick_once import registry_with_warnings, workspace_and_monitors
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.paths import resolve_db_path
from agentmonitors.store.database import Database
from agentmonitors.store import queries
from agentmonitors.runtime import tick
from agentmonitors.sources import file_fingerprint, file_globs
from agentmonitors.sources.file_fingerprint import folders
note("imports (runtime, store, sources)", started)

def timed(owner, attribute, name):
    original = getattr(owner, attribute)
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            note(name, began)
    setattr(owner, attribute, wrapper)

timed(queries, "load_monitor_state", "state row load (not the source state)")
timed(folders, "walk_token", "state token (paths + stat keys)")
timed(file_globs, "_expand_marked", "glob walk (scandir + match)")
timed(file_fingerprint, "confined_stat_keys", "_walk+stat")
timed(file_fingerprint.FileFingerprintSource, "_reconcile", "_observe")
timed(tick.Runtime, "_ingest", "write-back (state row + history)")

began = time.perf_counter()
workspace, monitors = workspace_and_monitors(None, None)
registry = registry_with_warnings()
db = Database(resolve_db_path(workspace))
note("database open", began)
runtime = workspace_runtime(db, workspace, registry, monitors_dir=monitors, restore_backoff=True)
timed(runtime.definitions, "load", "definitions load")
began = time.perf_counter()
result = runtime.tick_blocking()
note("_tick", began)
db.close()
assert result.evaluated_monitors == ["tree"] and not result.emitted_event_ids, result
note("_total", started)
print(json.dumps(marks))
"""

ORDER = [
    "imports (runtime, store, sources)",
    "database open",
    "definitions load",
    "state row load (not the source state)",
    "glob walk (scandir + match)",
    "stat of every matched file (+ sort)",
    "state token (paths + stat keys)",
    "rest of observing (globs; a change: state)",
    "write-back (state row + history)",
    "rest of the tick (sweeps, history of backoff)",
]


def breakdown(marks: dict[str, float]) -> dict[str, float]:
    parts = {name: marks.get(name, 0.0) for name in ORDER}
    parts["stat of every matched file (+ sort)"] = (
        marks["_walk+stat"] - marks["glob walk (scandir + match)"]
    )
    parts["rest of observing (globs; a change: state)"] = (
        marks["_observe"] - marks["_walk+stat"] - marks["state token (paths + stat keys)"]
    )
    accounted = sum(
        parts[name]
        for name in ORDER[2:-1]  # the phases inside the tick
    )
    parts["rest of the tick (sweeps, history of backoff)"] = marks["_tick"] - accounted
    parts["(in-process total)"] = marks["_total"]
    return parts


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    base = tempfile.mkdtemp(prefix="am-once-bench-")
    env: dict[str, str] = {}
    tree = os.path.join(base, "tree")
    try:
        home = os.path.join(base, "home")
        os.makedirs(home)
        os.makedirs(tree)
        env = clean_env(home)
        run([SCRIPT, "init", "--enable-only"], env, cwd=tree)
        write_monitor(tree, "tree", FILE_MONITOR.format(glob="src/**/*.txt") + "  interval: 1s\n")
        build_tree(tree)
        run([SCRIPT, "daemon", "once"], env, cwd=tree)  # the baseline: every file hashed
        due = make_due(db_path_of(env, tree))
        floor: list[float] = []
        whole: list[float] = []
        phases: list[dict[str, float]] = []
        for _ in range(rounds):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            floor.append((time.perf_counter() - began) * 1000)
            due()
            began = time.perf_counter()
            done = subprocess.run(
                [SCRIPT, "daemon", "once"],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
                check=False,
            )
            whole.append((time.perf_counter() - began) * 1000)
            if not done.stdout.startswith("Evaluated 1 monitor(s), emitted 0 event(s)."):
                raise RuntimeError(f"unexpected output: {done.stdout!r} {done.stderr!r}")
            due()
            inside = subprocess.run(
                [sys.executable, "-c", "import json\n" + PHASES],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
                check=True,
            )
            phases.append(breakdown(json.loads(inside.stdout.strip().splitlines()[-1])))
        floor_ms = statistics.median(floor)
        whole_ms = statistics.median(whole)
        mark = "PASS" if whole_ms <= 150 else "MISS"
        print(f"daemon once, 10,000 unchanged files, {rounds} rounds, medians")
        print(wrapper_note())
        print(f"  {'python -c pass (floor)':<48} {floor_ms:7.1f} ms")
        print(
            f"  {'daemon once (whole process)':<48} {whole_ms:7.1f} ms"
            f"  {whole_ms / floor_ms:5.1f}x floor  (<= 150 ms  {mark})"
        )
        print("  in one fresh interpreter, phase by phase:")
        for name in [*ORDER, "(in-process total)"]:
            value = statistics.median(round_[name] for round_ in phases)
            print(f"    {name:<46} {value:7.1f} ms")
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

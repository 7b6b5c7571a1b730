"""``agentmonitors validate`` against bare Python: the cost an editor or pre-commit pays.

Run: .venv/bin/python benchmarks/bench_validate.py [rounds]   (default 30)

A project with one monitor of each polling source (file-fingerprint, command-poll,
api-poll, schedule) is validated through the console script, as a pre-commit hook runs
it, once to compile the monitors and then ``rounds`` times, each round alternating with
``python -c pass`` of the same interpreter so the machine's noise hits both alike. Two
figures per process, as medians: CPU time (user + system, from ``getrusage`` of the
children: what the machine spends, steady under load) and wall time. The goal is the
ratio to the floor: <= 3x. Byte-code is compiled first, as an installed package has it.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(Path(sys.executable).parent / "agentmonitors")
GOAL = 3.0

MONITORS = {
    "notes": 'watch:\n  type: file-fingerprint\n  globs: "notes/**/*.md"\n',
    "status": "watch:\n  type: command-poll\n  command: [git, status]\n  interval: 5m\n",
    "remote": "watch:\n  type: api-poll\n  url: http://127.0.0.1:9/status\n  interval: 5m\n",
    "weekly": 'watch:\n  type: schedule\n  cron: "0 9 * * 1"\n',
}


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, str]:
    """(CPU ms, wall ms, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = (time.perf_counter() - begin) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return cpu, wall, done.stdout


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    compiled_env = {**os.environ}
    compiled_env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True, env=compiled_env
    )
    base = tempfile.mkdtemp(prefix="am-validate-bench-")
    try:
        home, project = os.path.join(base, "home"), os.path.join(base, "project")
        os.makedirs(home)
        os.makedirs(project)
        env = {
            key: value
            for key, value in compiled_env.items()
            if not key.startswith(("AGENTMONITORS_", "CLAUDE", "CODEX", "XDG_"))
        }
        env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"))
        subprocess.run(
            [SCRIPT, "init", "--enable-only"], env=env, cwd=project, check=True, capture_output=True
        )
        for name, frontmatter in MONITORS.items():
            folder = os.path.join(project, ".claude", "monitors", name)
            os.makedirs(folder)
            Path(folder, "MONITOR.md").write_text(f"---\n{frontmatter}---\nLook.\n")
        floor_argv = [sys.executable, "-c", "pass"]
        validate_argv = [SCRIPT, "validate"]
        # The first run compiles each monitor; later ones read it back, as in an editor.
        _, _, first = timed(validate_argv, env, project)
        if f"Valid monitors: {len(MONITORS)}" not in first:
            raise RuntimeError(f"validate did not pass: {first!r}")
        samples: dict[str, list[tuple[float, float]]] = {"floor": [], "validate": []}
        for _ in range(rounds):
            for name, argv in (("floor", floor_argv), ("validate", validate_argv)):
                cpu, wall, _ = timed(argv, env, project)
                samples[name].append((cpu, wall))
        print(f"validate, {len(MONITORS)} monitors (one per polling source), {rounds} rounds")
        print(f"  {'':<10} {'CPU ms':>8} {'wall ms':>8}")
        medians = {}
        for name, pairs in samples.items():
            cpu = statistics.median(pair[0] for pair in pairs)
            wall = statistics.median(pair[1] for pair in pairs)
            medians[name] = (cpu, wall)
            print(f"  {name:<10} {cpu:8.1f} {wall:8.1f}")
        for index, label in ((0, "CPU"), (1, "wall")):
            ratio = medians["validate"][index] / medians["floor"][index]
            verdict = "PASS" if ratio <= GOAL else "MISS"
            print(f"  ratio ({label}): {ratio:.2f}x  (goal <= {GOAL:g}x  {verdict})")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

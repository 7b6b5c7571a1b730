"""Whole-process wall time of ``agentmonitors hook deliver``, as Claude Code runs it.

Run: .venv/bin/python benchmarks/bench_hook_deliver.py [rounds]
Cases: a warm daemon with nothing pending; a warm daemon with 1,000 unread events
and a high delivery to render at every call; a directory that is not enabled.
Byte-code is compiled first (as an installed package has it) and the console
script is used, exactly as the hook line runs it.
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
from pathlib import Path

from _daemon import percentile

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(Path(sys.executable).parent / "agentmonitors")
HOST = "bench-host"


def run(args: list[str], env: dict[str, str], stdin: str = "", cwd: str | None = None) -> str:
    done = subprocess.run(
        args, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=True
    )
    return done.stdout


def once(argv: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, str]:
    begin = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, check=False)
    return (time.perf_counter() - begin) * 1000, done.stdout


def interleaved(
    cases: dict[str, tuple[list[str], str]], env: dict[str, str], rounds: int
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Run every case once per round, so machine noise hits all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, (argv, stdin) in cases.items():
            elapsed, outputs[name] = once(argv, env, stdin)
            samples[name].append(elapsed)
    return samples, outputs


def report(name: str, samples: list[float]) -> None:
    print(
        f"  {name:<44} median {statistics.median(samples):6.1f} ms   "
        f"p95 {percentile(samples, 0.95):6.1f} ms"
    )


def seed_high_events(db_path: str, workspace: str, count: int) -> None:
    """Materialize ``count`` settled high events straight into the daemon's database."""
    from agentmonitors.delivery.projection import project_event
    from agentmonitors.monitor.model import UrgencyBand
    from agentmonitors.runtime.materialize import materialize
    from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
    from agentmonitors.sources.observation import Observation
    from agentmonitors.store.database import Database

    monitor = CapturedMonitor(
        id="bench",
        display_name="bench",
        file_path=os.path.join(workspace, ".claude", "monitors", "bench", "MONITOR.md"),
        instructions="Look at the changed file and decide whether the plan still holds.",
        source_name="file-fingerprint",
        name=None,
        band=UrgencyBand("high", "high"),
        baseline_strategy="incremental",
        tags=(),
    )
    observed_ms = int(time.time() * 1000) - 60_000  # settled long ago
    with Database(db_path) as db, db.write() as conn:
        for index in range(count):
            path = os.path.join(workspace, "src", f"module_{index:04d}.py")
            observation = Observation(
                title=f"File changed: {path}",
                summary=f"File changed: {path}",
                snapshot_text=f"def f():\n    return {index}\n",
                object_key=path,
                query_scope={"filePath": path},
                change_kind="modified",
            )
            envelope = envelope_for(monitor, observation, observed_ms)
            # Projected into the sessions as the daemon does, so the hook has work.
            materialize(conn, envelope, workspace, observed_ms, project_event)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "src")],
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )
    base = tempfile.mkdtemp(prefix="am-hook-bench-")
    try:
        home = os.path.join(base, "home")
        project = os.path.join(base, "project")
        bare_dir = os.path.join(base, "plain")
        for folder in (home, project, bare_dir):
            os.makedirs(folder)
        env = {
            key: value
            for key, value in os.environ.items()
            if key
            not in (
                "PYTHONDONTWRITEBYTECODE",
                "CLAUDE_PROJECT_DIR",
                "AGENTMONITORS_DB",
                "AGENTMONITORS_SOCKET",
            )
        }
        env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, ".local", "share"))
        run([SCRIPT, "init", "--enable-only"], env, cwd=project)
        start = json.dumps({"session_id": HOST, "hook_event_name": "SessionStart", "cwd": project})
        run([SCRIPT, "session", "start"], env, start)
        status = json.loads(run([SCRIPT, "daemon", "status", "--format", "json"], env, cwd=project))
        db_path = run(
            [
                sys.executable,
                "-c",
                "import sys; from agentmonitors.paths import resolve_db_path; "
                "print(resolve_db_path(sys.argv[1]))",
                project,
            ],
            env,
        ).strip()
        prompt = json.dumps(
            {
                "session_id": HOST,
                "hook_event_name": "UserPromptSubmit",
                "cwd": project,
                "prompt": "go on",
            }
        )

        deliver = [SCRIPT, "hook", "deliver"]
        plain_prompt = json.dumps(
            {"session_id": HOST, "hook_event_name": "UserPromptSubmit", "cwd": bare_dir}
        )
        floors = {
            "bare `python -c pass` (for scale)": ([sys.executable, "-c", "pass"], ""),
            "`python -c 'import json, _socket'` (floor)": (
                [sys.executable, "-c", "import json, _socket"],
                "",
            ),
        }
        idle_cases = {
            **floors,
            "directory not enabled": (deliver, plain_prompt),
            "warm daemon, nothing pending": (deliver, prompt),
        }
        idle, idle_out = interleaved(idle_cases, env, rounds)
        assert idle_out["warm daemon, nothing pending"] == "", "nothing should be pending"
        assert idle_out["directory not enabled"] == ""

        os.environ.update(XDG_DATA_HOME=env["XDG_DATA_HOME"], HOME=home)
        seed_high_events(db_path, project, 1000)
        busy_cases = {**floors, "warm daemon, 1,000 unread, high delivery": (deliver, prompt)}
        busy, busy_out = interleaved(busy_cases, env, rounds)
        assert "### bench (high)" in busy_out["warm daemon, 1,000 unread, high delivery"]

        print(f"hook deliver, whole process, {rounds} interleaved rounds")
        print(f"(socket {status['socketPath']})")
        print("phase 1:")
        for name, samples in idle.items():
            report(name, samples)
        print("phase 2 (after 1,000 settled high events were stored):")
        for name, samples in busy.items():
            report(name, samples)
        run([SCRIPT, "daemon", "stop"], env, cwd=project)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

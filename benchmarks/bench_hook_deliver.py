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


def timed(env: dict[str, str], payload: str, rounds: int) -> tuple[list[float], str]:
    samples = []
    last = ""
    for _ in range(rounds):
        start = time.perf_counter()
        done = subprocess.run(
            [SCRIPT, "hook", "deliver"],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        samples.append((time.perf_counter() - start) * 1000)
        last = done.stdout
    return samples, last


def report(name: str, samples: list[float]) -> None:
    print(
        f"  {name:<44} median {statistics.median(samples):6.1f} ms   "
        f"p95 {percentile(samples, 0.95):6.1f} ms"
    )


def seed_high_events(db_path: str, workspace: str, count: int) -> None:
    """Materialize ``count`` settled high events straight into the daemon's database."""
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
            materialize(
                conn, envelope_for(monitor, observation, observed_ms), workspace, observed_ms
            )


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

        def python_floor(code: str) -> list[float]:
            samples = []
            for _ in range(rounds):
                begin = time.perf_counter()
                subprocess.run([sys.executable, "-c", code], check=True, env=env)
                samples.append((time.perf_counter() - begin) * 1000)
            return samples

        bare = python_floor("pass")
        with_json = python_floor("import json, _socket")

        idle, idle_out = timed(env, prompt, rounds)
        assert idle_out == "", "nothing should be pending"

        os.environ.update(XDG_DATA_HOME=env["XDG_DATA_HOME"], HOME=home)
        seed_high_events(db_path, project, 1000)
        busy, busy_out = timed(env, prompt, rounds)
        assert "### bench (high)" in busy_out, "a high delivery should render"

        plain_prompt = json.dumps(
            {"session_id": HOST, "hook_event_name": "UserPromptSubmit", "cwd": bare_dir}
        )
        disabled, disabled_out = timed(env, plain_prompt, rounds)
        assert disabled_out == ""

        print(f"hook deliver, whole process, {rounds} rounds each (socket {status['socketPath']})")
        report("bare `python -c pass` (for scale)", bare)
        report("`python -c 'import json, _socket'` (the floor)", with_json)
        report("warm daemon, nothing pending", idle)
        report("warm daemon, 1,000 unread, high delivery", busy)
        report("directory not enabled", disabled)
        run([SCRIPT, "daemon", "stop"], env, cwd=project)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

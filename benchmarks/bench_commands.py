"""Whole-process wall time of the commands people and agents run, against the floor.

Run: .venv/bin/python benchmarks/bench_commands.py [rounds]   (default 20)

Every command runs as a fresh process through the console script, exactly as a hook
line or an agent runs it, and every round runs each case once, alternating with a bare
``python -c pass`` of the same interpreter, so the machine's noise hits all of them
alike. Each figure is the median over the rounds; the ratio is to the floor's median
of the same run, and the target column says whether it holds.

Cases:
- ``--version``; ``events list``, ``events ack``, ``session list`` against a running
  daemon with a session and some events; ``validate`` over a few monitors;
- ``hook deliver`` with Claude Code's own UserPromptSubmit payload on stdin: in a folder
  that is not enabled, warm with nothing pending, and with a high batch to render;
- ``hook deliver`` warm with nothing pending in a second workspace whose store holds 200
  sessions and 20,000 events, as a ratio to the same case with an empty store;
- ``daemon once`` over 10,000 unchanged files (after one baseline run), in ms;
- for scale, no target: ``import click``, and importing pydantic and building one model
  (what any command that parses a monitor pays before its own work).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(Path(sys.executable).parent / "agentmonitors")
FLOOR = "python -c pass (floor)"

PYDANTIC_FIRST_MODEL = (
    "import pydantic\nclass Probe(pydantic.BaseModel):\n    field: int\nProbe(field=1)"
)

FILE_MONITOR = "watch:\n  type: file-fingerprint\n  globs: '{glob}'\n"


@dataclass
class Case:
    argv: list[str]
    stdin: str = ""
    cwd: str | None = None
    # Untimed set-up before each run.
    before: Callable[[], None] | None = None
    # Checks the last run's stdout: a benchmark of a failing command proves nothing.
    check: Callable[[str], bool] | None = None


@dataclass
class Target:
    limit: float
    unit: str  # "x" (ratio to the floor) or "ms"


def run(args: list[str], env: dict[str, str], stdin: str = "", cwd: str | None = None) -> str:
    done = subprocess.run(
        args, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args} exited {done.returncode}: {done.stderr}")
    return done.stdout


def interleaved(cases: dict[str, Case], env: dict[str, str], rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in cases}
    last: dict[str, str] = {}
    for _ in range(rounds):
        for name, case in cases.items():
            if case.before is not None:
                case.before()
            begin = time.perf_counter()
            done = subprocess.run(
                case.argv,
                input=case.stdin,
                capture_output=True,
                text=True,
                env=env,
                cwd=case.cwd,
                check=False,
            )
            samples[name].append((time.perf_counter() - begin) * 1000)
            last[name] = done.stdout
    for name, case in cases.items():
        if case.check is not None and not case.check(last[name]):
            raise RuntimeError(f"{name}: unexpected output {last[name][:300]!r}")
    return samples


def write_monitor(project: str, monitor_id: str, frontmatter: str) -> None:
    folder = os.path.join(project, ".claude", "monitors", monitor_id)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "MONITOR.md"), "w") as handle:
        handle.write(f"---\n{frontmatter}---\nReact to the change.\n")


def prompt_payload(session: str, cwd: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": os.path.join(cwd, ".transcript.jsonl"),
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go on",
        }
    )


def start_session(env: dict[str, str], project: str, host: str) -> tuple[str, str]:
    """Boot the project's daemon through the SessionStart hook; (session id, db path)."""
    start = json.dumps(
        {
            "session_id": host,
            "transcript_path": os.path.join(project, ".transcript.jsonl"),
            "cwd": project,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    run([SCRIPT, "session", "start"], env, start, cwd=project)
    sessions = json.loads(run([SCRIPT, "session", "list", "--format", "json"], env, cwd=project))
    (session,) = [s for s in sessions if s["hostSessionId"] == host]
    return str(session["id"]), db_path_of(env, project)


def open_sessions(project: str, count: int) -> list[str]:
    from agentmonitors.daemon.client import call
    from agentmonitors.paths import default_hook_state_path, resolve_socket_path

    socket = resolve_socket_path(project)
    ids = []
    for index in range(count):
        host = f"other-{index:03d}"
        record = call(
            socket,
            "session.open",
            {
                "adapter": "claude-code",
                "hostSessionId": host,
                "agentIdentity": host,
                "hookStatePath": default_hook_state_path(host, project),
                "workspacePath": project,
                "role": "lead",
            },
        )
        ids.append(str(record["id"]))
    return ids


def seed_events(
    db_path: str, workspace: str, count: int, sessions: list[str], extra: list[str] = ()
) -> None:
    """Store ``count`` settled high events, each projected into ``sessions`` (and one of
    ``extra`` in turn), as the daemon would have after observing them."""
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
    # Observed a minute ago: past the high settle window, so deliverable at once.
    now_ms = int(time.time() * 1000) - 60_000
    with Database(db_path) as db, db.write() as conn:
        for index in range(count):
            path = os.path.join(workspace, "src", f"module_{index % 500:03d}.py")
            observation = Observation(
                title=f"File changed: {path}",
                summary=f"File changed: {path}",
                snapshot_text=f"def f():\n    return {index}\n",
                object_key=path,
                query_scope={"filePath": path},
                change_kind="modified",
            )
            targets = [*sessions, extra[index % len(extra)]] if extra else sessions
            project = functools.partial(project_event, targets=targets)
            envelope = envelope_for(monitor, observation, now_ms)
            materialize(conn, envelope, workspace, now_ms, project)


def build_tree(root: str, dirs: int = 100, files_per_dir: int = 100) -> None:
    old = time.time() - 3600
    for d in range(dirs):
        folder = os.path.join(root, "src", f"d{d:03}")
        os.makedirs(folder)
        for f in range(files_per_dir):
            path = os.path.join(folder, f"f{f:03}.txt")
            with open(path, "w") as handle:
                handle.write(f"file {d}/{f}\n" * 20)
            os.utime(path, (old, old))


def make_due(db_path: str) -> Callable[[], None]:
    """Mark every monitor of the store as last observed an hour earlier, so the next tick
    observes it, as a scheduler running ``daemon once`` finds it once the interval passed.

    An hour, not "never": the stored time keeps its width, as between two real runs, so
    SQLite rewrites only the changed page of the state row, not its 10,000 files' worth.
    """

    def reset() -> None:
        conn = sqlite3.connect(db_path)
        try:
            with conn:
                conn.execute(
                    "UPDATE monitor_state SET last_observation_at = last_observation_at - 3600"
                )
        finally:
            conn.close()

    return reset


def acknowledge_all(db_path: str) -> None:
    """Mark every projected row acknowledged, as a long-lived store mostly is."""
    conn = sqlite3.connect(db_path)
    try:
        with conn:
            conn.execute(
                "UPDATE session_event_state SET acknowledged_at = updated_at"
                " WHERE acknowledged_at IS NULL"
            )
    finally:
        conn.close()


def db_path_of(env: dict[str, str], project: str) -> str:
    code = (
        "import sys; from agentmonitors.paths import resolve_db_path; "
        "print(resolve_db_path(sys.argv[1]))"
    )
    return run([sys.executable, "-c", code, project], env).strip()


def wrapper_note() -> str:
    """Which console script the figures ran through: pip before 25 writes one that
    imports ``re`` before our entry point, about half a bare interpreter's start."""
    with open(SCRIPT, encoding="utf-8") as handle:
        text = handle.read()
    if "import re" in text:
        return (
            "console script: written by pip < 25, imports `re` first (recreate the venv"
            " with `python3 -m venv --upgrade-deps .venv` and reinstall for the lean one)"
        )
    return "console script: imports nothing before agentmonitors (pip >= 25 or uv)"


def clean_env(home: str) -> dict[str, str]:
    drop = ("PYTHONDONTWRITEBYTECODE", "CLAUDE_PROJECT_DIR", "AGENTMONITORS_DB")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env.pop("AGENTMONITORS_SOCKET", None)
    env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, ".local", "share"))
    return env


def table(samples: dict[str, list[float]], targets: dict[str, Target]) -> list[str]:
    floor = statistics.median(samples[FLOOR])
    lines = [f"  {'command':<52} {'ms':>7} {'floor':>7} {'ratio':>6}  target"]
    for name, values in samples.items():
        median = statistics.median(values)
        ratio = median / floor
        target = targets.get(name)
        verdict = ""
        if target is not None:
            figure = ratio if target.unit == "x" else median
            mark = "PASS" if figure <= target.limit else "MISS"
            verdict = f"<= {target.limit:g}{'x' if target.unit == 'x' else ' ms'}  {mark}"
        lines.append(f"  {name:<52} {median:7.1f} {floor:7.1f} {ratio:5.2f}x  {verdict}")
    return lines


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "src")],
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )
    base = tempfile.mkdtemp(prefix="am-cmd-bench-")
    projects: list[str] = []
    env: dict[str, str] = {}
    try:
        home = os.path.join(base, "home")
        project = os.path.join(base, "project")
        history = os.path.join(base, "history")
        plain = os.path.join(base, "plain")
        tree = os.path.join(base, "tree")
        for folder in (home, project, history, plain, tree):
            os.makedirs(folder)
        env = clean_env(home)
        # The seeding below runs in this process against the same data folders.
        os.environ.update(XDG_DATA_HOME=env["XDG_DATA_HOME"], HOME=home)

        for folder in (project, history, tree):
            run([SCRIPT, "init", "--enable-only"], env, cwd=folder)
            projects.append(folder)
        for name, glob in (("notes", "notes/*.md"), ("docs", "docs/**/*.md"), ("cfg", "*.toml")):
            write_monitor(project, name, FILE_MONITOR.format(glob=glob))
        write_monitor(history, "notes", FILE_MONITOR.format(glob="notes/*.md"))
        tree_monitor = FILE_MONITOR.format(glob="src/**/*.txt") + "  interval: 1s\n"
        write_monitor(tree, "tree", tree_monitor)
        # Built first: files written within 2 s of a hash are re-read until they settle.
        build_tree(tree)

        session, db_path = start_session(env, project, "bench-host")
        other, history_db = start_session(env, history, "history-host")
        seed_events(db_path, project, 20, [session])
        run([SCRIPT, "events", "ack", "--session", session], env, cwd=project)
        others = open_sessions(history, 199)
        seed_events(history_db, history, 20_000, [other], others)
        acknowledge_all(history_db)
        run([SCRIPT, "daemon", "once"], env, cwd=tree)  # the baseline: every file hashed
        tree_due = make_due(db_path_of(env, tree))

        floor = Case([sys.executable, "-c", "pass"])
        cases = {
            FLOOR: floor,
            # References, no targets: what any command using them pays before its work.
            "(reference) python -c 'import click'": Case([sys.executable, "-c", "import click"]),
            "(reference) pydantic import + one model": Case(
                [sys.executable, "-c", PYDANTIC_FIRST_MODEL]
            ),
            "--version": Case([SCRIPT, "--version"], check=lambda out: out.strip() != ""),
            "events list": Case(
                [SCRIPT, "events", "list", "--session", session],
                cwd=project,
                check=lambda out: "bench" in out,
            ),
            "events list --format toon (an agent's default)": Case(
                [SCRIPT, "events", "list", "--session", session, "--format", "toon"],
                cwd=project,
                check=lambda out: "bench" in out,
            ),
            "events ack": Case(
                [SCRIPT, "events", "ack", "--session", session],
                cwd=project,
                check=lambda out: out.startswith("Acknowledged"),
            ),
            "session list": Case(
                [SCRIPT, "session", "list"], cwd=project, check=lambda out: session in out
            ),
            "validate (3 monitors)": Case(
                [SCRIPT, "validate", ".claude/monitors"], cwd=project, check=lambda out: out != ""
            ),
            "hook deliver, folder not enabled": Case(
                [SCRIPT, "hook", "deliver"],
                prompt_payload("plain-host", plain),
                cwd=plain,
                check=lambda out: out == "",
            ),
            "hook deliver, warm, nothing pending": Case(
                [SCRIPT, "hook", "deliver"],
                prompt_payload("bench-host", project),
                cwd=project,
                check=lambda out: out == "",
            ),
            "hook deliver, 200 sessions + 20,000 events": Case(
                [SCRIPT, "hook", "deliver"],
                prompt_payload("history-host", history),
                cwd=history,
                check=lambda out: out == "",
            ),
            "daemon once, 10,000 unchanged files": Case(
                [SCRIPT, "daemon", "once"],
                cwd=tree,
                before=tree_due,
                check=lambda out: out.startswith("Evaluated 1 monitor(s), emitted 0 event(s)."),
            ),
        }
        quiet = interleaved(cases, env, rounds)

        # Each call claims a context-cap's worth (about 20): enough for every round.
        seed_events(db_path, project, max(1000, 30 * rounds), [session])
        busy = interleaved(
            {
                FLOOR: floor,
                "hook deliver, high batch to render": Case(
                    [SCRIPT, "hook", "deliver"],
                    prompt_payload("bench-host", project),
                    cwd=project,
                    check=lambda out: "### bench (high)" in out,
                ),
            },
            env,
            rounds,
        )

        targets = {
            "--version": Target(2.0, "x"),
            "events list": Target(3.0, "x"),
            "events list --format toon (an agent's default)": Target(3.0, "x"),
            "events ack": Target(3.0, "x"),
            "session list": Target(3.0, "x"),
            "validate (3 monitors)": Target(3.0, "x"),
            "hook deliver, folder not enabled": Target(1.8, "x"),
            "hook deliver, warm, nothing pending": Target(2.0, "x"),
            "hook deliver, high batch to render": Target(2.5, "x"),
            "daemon once, 10,000 unchanged files": Target(150, "ms"),
        }
        print(f"whole processes, {rounds} interleaved rounds, medians\n{wrapper_note()}")
        for line in table(quiet, targets):
            print(line)
        print("after 1,000 high events were stored:")
        for line in table(busy, targets)[1:]:
            print(line)
        empty = statistics.median(quiet["hook deliver, warm, nothing pending"])
        full = statistics.median(quiet["hook deliver, 200 sessions + 20,000 events"])
        growth = (full / empty - 1) * 100
        mark = "PASS" if growth <= 10 else "MISS"
        print(f"hook deliver with history vs an empty store: {growth:+.1f} %  (<= +10 %  {mark})")
    finally:
        for folder in projects:
            subprocess.run(
                [SCRIPT, "daemon", "stop"], env=env, cwd=folder, capture_output=True, check=False
            )
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

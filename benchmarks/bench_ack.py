"""How long acknowledging a whole backlog takes, for 2,000 and 20,000 unread events.

Run: .venv/bin/python benchmarks/bench_ack.py [sizes...]   (default 2000 20000)

For each size, on a fresh store:
- in process: the delivery service's ack-all (``events ack`` without ids) and an ack
  naming every unread id, on a real database file, after a claim folded the older
  versions of a few ``net`` objects (so the folded rows are acknowledged too);
- whole process: ``agentmonitors events ack --session ID`` against a running daemon,
  as an agent runs it (the CLI gives up after its IPC timeout, so this must stay
  well under it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_hook_deliver import SCRIPT, run, seed_high_events

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.projection import project_event
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.delivery.states import unread_ids
from agentmonitors.monitor.model import UrgencyBand
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store.database import Database

START_MS = 1_780_000_000_000
NET_OBJECTS = 30
NET_VERSIONS = 10


def _monitor(strategy: str) -> CapturedMonitor:
    return CapturedMonitor(
        id=strategy,
        display_name=strategy,
        file_path=f"/ws/.claude/monitors/{strategy}/MONITOR.md",
        instructions="Look at it.",
        source_name="scripted",
        name=None,
        band=UrgencyBand("high", "high"),
        baseline_strategy=strategy,
        tags=(),
    )


def _seed(db: Database, count: int) -> None:
    net, plain = _monitor("net"), _monitor("incremental")
    with db.write() as conn:
        for index in range(count):
            collapsing = index < NET_OBJECTS * NET_VERSIONS
            observation = Observation(
                title=f"change {index}",
                snapshot_text=f"version {index}\n",
                object_key=f"net-{index % NET_OBJECTS}" if collapsing else f"file-{index}",
            )
            at = START_MS + index * 1000
            envelope = envelope_for(net if collapsing else plain, observation, at)
            materialize(conn, envelope, "/ws", at, project_event)


def in_process(count: int, by_ids: bool) -> tuple[float, int]:
    """(ms, rows acknowledged) for one ack of a fresh ``count``-event backlog."""
    base = tempfile.mkdtemp(prefix="am-ack-bench-")
    try:
        clock = ManualClock(START_MS)
        with Database(os.path.join(base, "inbox.db")) as db:
            service = DeliveryService(db, clock)
            session = str(service.open_session("bench", workspace_path="/ws")["id"])
            _seed(db, count)
            clock.advance(count * 1000 + 60_000)
            service.claim(session, "turn-interruptible", NET_OBJECTS)
            ids: list[str] | None = None
            if by_ids:
                with db.read() as conn:
                    ids = unread_ids(conn, session)
            begin = time.perf_counter()
            result = service.ack_counted(session, ids)
            elapsed = (time.perf_counter() - begin) * 1000
            with db.read() as conn:
                (left,) = conn.execute(
                    "SELECT COUNT(*) FROM session_event_state WHERE acknowledged_at IS NULL"
                ).fetchone()
            assert left == 0, f"{left} rows left unacknowledged"
            return elapsed, result["acknowledged"]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def whole_process(count: int) -> tuple[float, str]:
    """(ms, output) of ``events ack --session`` against a daemon holding ``count`` unread."""
    base = tempfile.mkdtemp(prefix="am-ack-bench-")
    home = os.path.join(base, "home")
    project = os.path.join(base, "project")
    for folder in (home, project):
        os.makedirs(folder)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CLAUDE_PROJECT_DIR", "AGENTMONITORS_DB", "AGENTMONITORS_SOCKET")
    }
    env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, ".local", "share"))
    saved = {key: os.environ.get(key) for key in ("HOME", "XDG_DATA_HOME")}
    try:
        run([SCRIPT, "init", "--enable-only"], env, cwd=project)
        start = json.dumps(
            {"session_id": "bench", "hook_event_name": "SessionStart", "cwd": project}
        )
        run([SCRIPT, "session", "start"], env, start)
        sessions = json.loads(
            run([SCRIPT, "session", "list", "--format", "json"], env, cwd=project)
        )
        session = str(sessions[0]["id"])
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
        os.environ.update(HOME=home, XDG_DATA_HOME=env["XDG_DATA_HOME"])
        seed_high_events(db_path, project, count)
        begin = time.perf_counter()
        done = subprocess.run(
            [SCRIPT, "events", "ack", "--session", session],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            check=False,
        )
        elapsed = (time.perf_counter() - begin) * 1000
        run([SCRIPT, "daemon", "stop"], env, cwd=project)
        return elapsed, (done.stdout + done.stderr).strip()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or [2000, 20000]
    print("acknowledging a whole backlog")
    for count in sizes:
        all_ms, all_count = in_process(count, by_ids=False)
        ids_ms, ids_count = in_process(count, by_ids=True)
        cli_ms, output = whole_process(count)
        print(f"  {count:>6} unread")
        print(f"    in process, ack-all              {all_ms:8.1f} ms  ({all_count} acknowledged)")
        print(f"    in process, every id named       {ids_ms:8.1f} ms  ({ids_count} acknowledged)")
        print(f"    `events ack --session`, whole    {cli_ms:8.1f} ms  ({output})")


if __name__ == "__main__":
    main()

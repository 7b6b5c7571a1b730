"""Soak: a daemon with 20 monitors over all five sources, busy for an hour.

Run: .venv/bin/python benchmarks/bench_soak.py [--minutes 60] [--warmup-minutes M] [--json]

What runs (a throwaway home, project and git repository):
- 12 file-fingerprint monitors over ``area00``..``area11`` (two of them high urgency):
  one file of one area changes every second, in turn;
- 3 command-poll monitors: ``cat state/counter.txt`` (the counter moves every 5 s), a
  ``git rev-parse HEAD`` and an ``echo`` that never changes;
- 2 api-poll monitors on a 127.0.0.1 server: one body changes every 10 s, the other
  never does and answers with an ``ETag`` (so it is asked conditionally);
- 2 schedule monitors firing every minute;
- 1 incoming-changes monitor over ``src``: a commit lands every 20 s;
- 3 sessions (the Claude Code hooks' own payloads), each every 3 s: ``hook deliver``
  (timed), then ``events list --unread`` and ``events ack`` of exactly what it listed.

Figures at start (after the first tick), at the end of the warm-up and at the end: the
daemon's RSS, open descriptors, threads and child processes (each the largest of the
samples taken every second in the window before, as a short command or a worker thread
may be alive at one instant), database and WAL size, log size, events produced and
delivered, and the hooks' p50/p99. After the end the changes stop and each session
drains what is left; then every event produced must have been delivered to every
session exactly once: listed and acknowledged, or collapsed into a newer event of the
same object (never listed again after its acknowledgement).

Goals: after warm-up, RSS grows < 2 MiB per hour (least-squares slope of the per-second
samples); descriptors, threads and children flat (the smallest sample of the end's last
minute no higher than that of the warm-up's last minute: a pipe or socket open at one
instant is no leak; the table shows each window's largest); nothing lost, nothing
delivered twice. ``--json`` adds one JSON line with every figure (what the CI test reads).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SCRIPT = str(Path(sys.executable).parent / "agentmonitors")
FILE_AREAS = 12
HIGH_AREAS = (0, 1)
SESSIONS = ("soak-a", "soak-b", "soak-c")
SESSION_PERIOD_S = 3.0
RSS_GOAL_MIB_PER_HOUR = 2.0
PROBE_PERIOD_S = 300.0


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# ------------------------------------------------------------------ the project


def monitors(port: int) -> dict[str, str]:
    found: dict[str, str] = {}
    for area in range(FILE_AREAS):
        urgency = "urgency: high\n" if area in HIGH_AREAS else ""
        found[f"files-{area:02d}"] = (
            f"{urgency}watch:\n  type: file-fingerprint\n  globs: 'area{area:02d}/**/*.md'\n"
        )
    found["counter"] = "watch:\n  type: command-poll\n  command: [cat, state/counter.txt]\n"
    found["counter"] += "  interval: 2s\n"
    found["head"] = "watch:\n  type: command-poll\n  command: [git, rev-parse, HEAD]\n"
    found["head"] += "  interval: 5s\n"
    found["steady-command"] = "watch:\n  type: command-poll\n  command: [echo, steady]\n"
    found["steady-command"] += "  interval: 3s\n"
    for name, path in (("changing-api", "changing"), ("steady-api", "steady")):
        found[name] = (
            f"watch:\n  type: api-poll\n  url: http://127.0.0.1:{port}/{path}\n  interval: 2s\n"
        )
    for name in ("minutely-a", "minutely-b"):
        found[name] = "watch:\n  type: schedule\n  cron: '* * * * *'\n"
    found["incoming"] = "watch:\n  type: incoming-changes\n  paths: [src]\n  interval: 2s\n"
    return found


class Endpoint:
    """127.0.0.1: ``/changing`` moves every 10 s; ``/steady`` never does (ETag, 304s)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.full = 0
        self.not_modified = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path == "/steady" and self.headers.get("If-None-Match") == '"steady"':
                    outer.not_modified += 1
                    self.send_response(304)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.full += 1
                version = int((time.monotonic() - outer.started) // 10)
                text = "steady\n" if self.path == "/steady" else f"version {version}\n"
                body = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                if self.path == "/steady":
                    self.send_header("ETag", '"steady"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Project:
    def __init__(self, base: Path, port: int) -> None:
        self.base = base
        self.home = base / "home"
        self.root = base / "project"
        self.home.mkdir()
        self.root.mkdir()
        self.log = base / "daemon.log"
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AGENTMONITORS_", "CLAUDE", "CODEX", "CURSOR"))
        }
        self.env.update(HOME=str(self.home), XDG_DATA_HOME=str(self.home / ".local" / "share"))
        self.env.update(GIT_AUTHOR_NAME="soak", GIT_AUTHOR_EMAIL="soak@example.invalid")
        self.env.update(GIT_COMMITTER_NAME="soak", GIT_COMMITTER_EMAIL="soak@example.invalid")
        self.git("init", "-q", "-b", "main")
        for area in range(FILE_AREAS):
            folder = self.root / f"area{area:02d}" / "docs"
            folder.mkdir(parents=True)
            for page in range(5):
                (folder / f"page{page}.md").write_text(f"page {page}\n")
        (self.root / "state").mkdir()
        (self.root / "state" / "counter.txt").write_text("0\n")
        (self.root / "src").mkdir()
        (self.root / "src" / "module.txt").write_text("0\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "start")
        self.cli("init", "--enable-only")
        for monitor_id, frontmatter in monitors(port).items():
            folder = self.root / ".claude" / "monitors" / monitor_id
            folder.mkdir(parents=True)
            (folder / "MONITOR.md").write_text(f"---\n{frontmatter}---\nLook at the change.\n")
        self.cli("monitor", "approve", "--yes", "--all")
        status = json.loads(self.cli("daemon", "status", "--format", "json"))
        self.socket = str(status["socketPath"])
        self.db = self.cli_python(
            "from agentmonitors.paths import resolve_db_path; import sys;"
            " print(resolve_db_path(sys.argv[1]))",
            str(self.root),
        )

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.root, env=self.env, check=True)

    def cli(self, *args: str, stdin: str = "") -> str:
        done = subprocess.run(
            [SCRIPT, *args],
            cwd=self.root,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"agentmonitors {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def cli_python(self, code: str, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def payload(self, host: str, event: str) -> str:
        record: dict[str, Any] = {
            "session_id": host,
            "transcript_path": str(self.root / f".{host}.jsonl"),
            "cwd": str(self.root),
            "hook_event_name": event,
        }
        if event == "SessionStart":
            record["source"] = "startup"
        else:
            record.update(permission_mode="default", prompt="go on")
        return json.dumps(record)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()


# ------------------------------------------------------------------ what changes


class Changes:
    """One file a second, the counter every 5 s, a commit every 20 s."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.stop = threading.Event()
        self.second = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        root = self.project.root
        next_at = time.monotonic()
        while not self.stop.is_set():
            second = self.second
            area, page = second % FILE_AREAS, (second // FILE_AREAS) % 5
            (root / f"area{area:02d}" / "docs" / f"page{page}.md").write_text(f"edit {second}\n")
            if second % 5 == 0:
                (root / "state" / "counter.txt").write_text(f"{second // 5}\n")
            if second % 20 == 10:
                (root / "src" / "module.txt").write_text(f"{second}\n")
                self.project.git("commit", "-q", "-am", f"change {second}")
            self.second += 1
            next_at += 1.0
            self.stop.wait(max(0.0, next_at - time.monotonic()))


# ------------------------------------------------------------------ the sessions


@dataclass
class SessionTally:
    host: str
    session_id: str = ""
    acked: set[str] = field(default_factory=set)
    # Every id an unread listing showed: an acknowledgement whose answer timed out may
    # still have been applied, so the store, not the reply, says what was acknowledged.
    listed: set[str] = field(default_factory=set)
    ack_timeouts: int = 0
    # Ids listed again as unread after their acknowledgement succeeded.
    again: set[str] = field(default_factory=set)
    hook_ms: list[float] = field(default_factory=list)
    hook_failures: int = 0
    errors: list[str] = field(default_factory=list)
    # Events stored before the session began and never projected into it: not its news.
    before: set[str] = field(default_factory=set)


class Agent:
    """A session that, every few seconds, submits a prompt and acknowledges what it lists."""

    def __init__(self, project: Project, tally: SessionTally, offset_s: float) -> None:
        self.project = project
        self.tally = tally
        self.offset_s = offset_s
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.stop.wait(self.offset_s)
        while not self.stop.is_set():
            self.turn()
            self.stop.wait(SESSION_PERIOD_S)

    def turn(self) -> int:
        """One prompt: the hook, then list and acknowledge; the number acknowledged."""
        with self.lock:
            begin = time.perf_counter()
            done = subprocess.run(
                [SCRIPT, "hook", "deliver"],
                cwd=self.project.root,
                env=self.project.env,
                input=self.project.payload(self.tally.host, "UserPromptSubmit"),
                capture_output=True,
                text=True,
                check=False,
            )
            self.tally.hook_ms.append((time.perf_counter() - begin) * 1000)
            if done.returncode != 0:
                self.tally.hook_failures += 1
            return self.acknowledge()

    def acknowledge(self) -> int:
        session = self.tally.session_id
        try:
            listed = json.loads(
                self.project.cli(
                    "events", "list", "--session", session, "--unread", "--all", "--format", "json"
                )
            )
        except (RuntimeError, ValueError) as error:
            self.tally.errors.append(str(error)[:200])
            return 0
        ids = [str(record["id"]) for record in listed]
        self.tally.listed.update(ids)
        self.tally.again.update(set(ids) & self.tally.acked)
        fresh = [event_id for event_id in ids if event_id not in self.tally.acked]
        if not fresh:
            return 0
        try:
            self.project.cli("events", "ack", "--session", session, "--event-ids", ",".join(fresh))
        except RuntimeError as error:
            self.tally.errors.append(str(error)[:200])
            self.tally.ack_timeouts += "Timed out" in str(error)
            return 0
        self.tally.acked.update(fresh)
        return len(fresh)


# ------------------------------------------------------------------ the daemon's figures


@dataclass
class Sample:
    at: float
    rss_kib: int
    fds: int
    threads: int
    children: int


def sample(pid: int, at: float) -> Sample:
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    children = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        # A thread may end between the listing and the read.
        with contextlib.suppress(OSError):
            children += len(Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return Sample(
        at,
        rss,
        len(os.listdir(f"/proc/{pid}/fd")),
        len(os.listdir(f"/proc/{pid}/task")),
        children,
    )


@dataclass
class Report:
    label: str
    minute: float
    rss_mib: float
    fds: int
    threads: int
    children: int
    db_kib: int
    wal_kib: int
    log_kib: int
    produced: int
    delivered: int
    hook_p50_ms: float
    hook_p99_ms: float


def file_kib(path: Path | str) -> int:
    try:
        return os.path.getsize(path) // 1024
    except OSError:
        return 0


def rss_slope_mib_per_hour(samples: list[Sample]) -> float:
    """Least-squares slope of RSS over time."""
    if len(samples) < 2:
        return 0.0
    xs = [s.at for s in samples]
    ys = [s.rss_kib / 1024 for s in samples]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    slope_per_s = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    return slope_per_s * 3600


def rss_slopes_by_quarter(samples: list[Sample]) -> list[float]:
    """The slope over each quarter of the samples' span: a bounded cache still filling
    and then full shows as falling quarters, a leak as steady ones."""
    if len(samples) < 8:
        return []
    start, span = samples[0].at, samples[-1].at - samples[0].at
    quarters: list[list[Sample]] = [[], [], [], []]
    for sample in samples:
        quarters[min(3, int(4 * (sample.at - start) / span))].append(sample)
    return [round(rss_slope_mib_per_hour(quarter), 2) for quarter in quarters]


class Soak:
    def __init__(
        self,
        minutes: float,
        warmup_minutes: float,
        memory_probe: Path | None = None,
        traced: bool = True,
    ) -> None:
        self.minutes = minutes
        self.memory_probe = memory_probe
        self.traced = traced
        self.warmup_minutes = warmup_minutes
        self.base = Path(tempfile.mkdtemp(prefix="am-soak-"))
        self.endpoint = Endpoint()
        self.project = Project(self.base, self.endpoint.port)
        self.daemon: subprocess.Popen[bytes] | None = None
        self.tallies = [SessionTally(host) for host in SESSIONS]
        self.agents: list[Agent] = []
        self.samples: list[Sample] = []
        self.reports: list[Report] = []
        self.hooks_seen = [0 for _ in SESSIONS]
        self.started = 0.0

    def start(self) -> None:
        # Traced, the daemon writes a memory probe at each warm-up end and every 5 minutes
        # after it (see memory_probe.py); its figures then include tracemalloc's own cost.
        probe = str(Path(__file__).with_name("memory_probe.py"))
        launcher = (
            # Options before the folder: what follows it is the command's own.
            [sys.executable, probe, "run", *self.probe_options(), str(self.memory_probe), "--"]
            if self.memory_probe is not None
            else [SCRIPT]
        )
        self.daemon = subprocess.Popen(
            [
                *launcher,
                *("daemon", "run", "--workspace", str(self.project.root)),
                *("--reap-after-ms", "0", "--log", str(self.project.log)),
            ],
            cwd=self.project.root,
            env=self.project.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not self.first_tick_done():
            if time.monotonic() > deadline or self.daemon.poll() is not None:
                raise RuntimeError("the daemon did not finish its first tick")
            time.sleep(0.2)
        for index, tally in enumerate(self.tallies):
            self.project.cli(
                "session", "start", stdin=self.project.payload(tally.host, "SessionStart")
            )
            listed = json.loads(self.project.cli("session", "list", "--format", "json"))
            (record,) = [item for item in listed if item["hostSessionId"] == tally.host]
            tally.session_id = str(record["id"])
            tally.before = {
                row[0]
                for row in self.project.query(
                    "SELECT id FROM monitor_events e WHERE NOT EXISTS (SELECT 1 FROM"
                    " session_event_state s WHERE s.event_id = e.id AND s.session_id = ?)",
                    tally.session_id,
                )
            }
            self.agents.append(Agent(self.project, tally, index * SESSION_PERIOD_S / 3))

    def probe_options(self) -> list[str]:
        return [] if self.traced else ["--untraced"]

    def first_tick_done(self) -> bool:
        if not os.path.exists(self.project.db):
            return False
        try:
            return bool(self.project.query("SELECT COUNT(*) FROM observation_history")[0][0])
        except sqlite3.OperationalError:  # the schema is being created
            return False

    def figures(self, label: str, window_from: float) -> Report:
        assert self.daemon is not None
        now = time.monotonic()
        window = [s for s in self.samples if s.at >= window_from] or [sample(self.daemon.pid, now)]
        hooks: list[float] = []
        for index, tally in enumerate(self.tallies):
            hooks += tally.hook_ms[self.hooks_seen[index] :]
            self.hooks_seen[index] = len(tally.hook_ms)
        log = self.project.log
        report = Report(
            label=label,
            minute=round((now - self.started) / 60, 2),
            rss_mib=round(sorted(s.rss_kib for s in window)[len(window) // 2] / 1024, 1),
            fds=max(s.fds for s in window),
            threads=max(s.threads for s in window),
            children=max(s.children for s in window),
            db_kib=file_kib(self.project.db),
            wal_kib=file_kib(self.project.db + "-wal"),
            log_kib=file_kib(log) + file_kib(str(log) + ".1"),
            produced=self.project.query("SELECT COUNT(*) FROM monitor_events")[0][0],
            delivered=min(len(tally.acked) for tally in self.tallies),
            hook_p50_ms=round(percentile(hooks, 0.5), 1),
            hook_p99_ms=round(percentile(hooks, 0.99), 1),
        )
        self.reports.append(report)
        return report

    def run(self) -> dict[str, Any]:
        self.start()
        assert self.daemon is not None
        self.started = time.monotonic()
        start_report = self.figures("start", self.started)
        print_report(start_report, header=True)
        changes = Changes(self.project)
        changes.thread.start()
        for agent in self.agents:
            agent.thread.start()
        warmup_end = self.started + self.warmup_minutes * 60
        end = self.started + self.minutes * 60
        warm_report: Report | None = None
        window_from = self.started
        next_probe = warmup_end
        while time.monotonic() < end:
            if self.daemon.poll() is not None:
                raise RuntimeError(f"the daemon exited with {self.daemon.returncode}")
            self.samples.append(sample(self.daemon.pid, time.monotonic()))
            if warm_report is None and time.monotonic() >= warmup_end:
                warm_report = self.figures("warm-up end", max(window_from, warmup_end - 60))
                print_report(warm_report)
                window_from = time.monotonic()
            if self.memory_probe is not None and time.monotonic() >= next_probe:
                self.daemon.send_signal(signal.SIGUSR2)
                next_probe += PROBE_PERIOD_S
            time.sleep(1.0)
        end_report = self.figures("end", max(window_from, end - 60))
        print_report(end_report)
        changes.stop.set()
        changes.thread.join()
        for agent in self.agents:
            agent.stop.set()
        for agent in self.agents:
            agent.thread.join()
        accounting = self.drain()
        after_warmup = [s for s in self.samples if s.at >= warmup_end]
        assert warm_report is not None
        return {
            "minutes": self.minutes,
            "warmupMinutes": self.warmup_minutes,
            "reports": [asdict(report) for report in self.reports],
            "rssSlopeMibPerHour": round(rss_slope_mib_per_hour(after_warmup), 2),
            "rssSlopeByQuarterMibPerHour": rss_slopes_by_quarter(after_warmup),
            # A leak raises the floor; a pipe or socket open at one sample only, the peak.
            "flat": {
                name: self.floor(name, warmup_end, end)
                <= self.floor(name, warmup_end - 60, warmup_end)
                for name in ("fds", "threads", "children")
            },
            "apiFullResponses": self.endpoint.full,
            "apiNotModified": self.endpoint.not_modified,
            "hookFailures": sum(tally.hook_failures for tally in self.tallies),
            "cliErrors": [error for tally in self.tallies for error in tally.errors][:5],
            **accounting,
        }

    def floor(self, name: str, start: float, end: float) -> int:
        """The smallest ``name`` sampled between ``end - 60 s`` (or ``start``) and ``end``."""
        window = [s for s in self.samples if max(start, end - 60) <= s.at <= end]
        return min((getattr(s, name) for s in window), default=0)

    def drain(self) -> dict[str, Any]:
        """Stop changing, let the daemon settle, acknowledge the rest; then count."""
        # A high event settles 15 s before a hook may show it; the slowest poll is 5 s.
        time.sleep(20)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            acknowledged = sum(agent.turn() for agent in self.agents)
            if acknowledged == 0 and not self.unresolved():
                break
            time.sleep(2)
        produced = {row[0] for row in self.project.query("SELECT id FROM monitor_events")}
        per_session = []
        for tally in self.tallies:
            rows = self.project.query(
                "SELECT event_id, COUNT(*), MAX(acknowledged_at IS NOT NULL),"
                " MAX(net_suppressed_at IS NOT NULL) FROM session_event_state"
                " WHERE session_id = ? GROUP BY event_id",
                tally.session_id,
            )
            # Acknowledged as the store has it, of what the agent was shown: an answer
            # that timed out does not make an applied acknowledgement a loss.
            acked = {row[0] for row in rows if row[2]} & tally.listed
            collapsed = {row[0] for row in rows if row[3] and row[0] not in acked}
            doubled = {row[0] for row in rows if row[1] > 1} | tally.again
            news = produced - tally.before
            lost = news - acked - collapsed
            per_session.append(
                {
                    "session": tally.host,
                    "produced": len(news),
                    "delivered": len(acked & news) + len(collapsed),
                    "acknowledged": len(acked),
                    "acknowledgedThoughTimedOut": len(acked - tally.acked),
                    "ackTimeouts": tally.ack_timeouts,
                    "collapsed": len(collapsed),
                    "lost": sorted(lost)[:10],
                    "lostCount": len(lost),
                    "twice": sorted(doubled)[:10],
                    "twiceCount": len(doubled),
                }
            )
        by_source = self.project.query(
            "SELECT source_name, COUNT(*) FROM monitor_events GROUP BY source_name"
        )
        return {
            "produced": len(produced),
            "producedBySource": {str(row[0]): int(row[1]) for row in by_source},
            "sessions": per_session,
            "nothingLost": all(item["lostCount"] == 0 for item in per_session),
            "nothingTwice": all(item["twiceCount"] == 0 for item in per_session),
        }

    def unresolved(self) -> int:
        total = 0
        for tally in self.tallies:
            rows = self.project.query(
                "SELECT id FROM monitor_events e WHERE NOT EXISTS ("
                " SELECT 1 FROM session_event_state s WHERE s.event_id = e.id"
                " AND s.session_id = ? AND (s.acknowledged_at IS NOT NULL"
                " OR s.net_suppressed_at IS NOT NULL))",
                tally.session_id,
            )
            total += len({row[0] for row in rows} - tally.before)
        return total

    def close(self) -> None:
        for agent in self.agents:
            agent.stop.set()
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(20)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait(10)
        self.endpoint.close()
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(self.base, ignore_errors=True)


# ------------------------------------------------------------------ printing


def print_report(report: Report, header: bool = False) -> None:
    if header:
        print(
            f"  {'point':<12} {'min':>5} {'RSS MiB':>8} {'fds':>4} {'thr':>4} {'kids':>4}"
            f" {'db KiB':>7} {'WAL KiB':>7} {'log KiB':>7} {'produced':>8} {'delivered':>9}"
            f" {'hook p50':>8} {'p99 ms':>7}"
        )
    print(
        f"  {report.label:<12} {report.minute:5.1f} {report.rss_mib:8.1f} {report.fds:4d}"
        f" {report.threads:4d} {report.children:4d} {report.db_kib:7d} {report.wal_kib:7d}"
        f" {report.log_kib:7d} {report.produced:8d} {report.delivered:9d}"
        f" {report.hook_p50_ms:8.1f} {report.hook_p99_ms:7.1f}",
        flush=True,
    )


def print_verdicts(result: dict[str, Any]) -> None:
    def mark(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    slope = result["rssSlopeMibPerHour"]
    print(
        f"RSS growth after warm-up: {slope:+.2f} MiB/hour"
        f"  (goal < {RSS_GOAL_MIB_PER_HOUR:g}  {mark(slope < RSS_GOAL_MIB_PER_HOUR)})"
        + ("  [a run under 30 min says little about this]" if result["minutes"] < 30 else "")
    )
    if result["rssSlopeByQuarterMibPerHour"]:
        quarters = ", ".join(f"{q:+.2f}" for q in result["rssSlopeByQuarterMibPerHour"])
        print(f"  by quarter after warm-up: {quarters} MiB/hour")
    for name, ok in result["flat"].items():
        print(f"{name} flat after warm-up: {mark(ok)}")
    for item in result["sessions"]:
        print(
            f"session {item['session']}: produced {item['produced']}, delivered "
            f"{item['delivered']} (acknowledged {item['acknowledged']}, collapsed "
            f"{item['collapsed']}), lost {item['lostCount']}, twice {item['twiceCount']}"
            + (
                f"; {item['ackTimeouts']} acknowledgement(s) timed out, applied for"
                f" {item['acknowledgedThoughTimedOut']} event(s)"
                if item["ackTimeouts"]
                else ""
            )
        )
    print(f"nothing lost: {mark(result['nothingLost'])}")
    print(f"nothing delivered twice: {mark(result['nothingTwice'])}")
    by_source = ", ".join(f"{name} {count}" for name, count in result["producedBySource"].items())
    print(f"events by source: {by_source}")
    print(
        f"api-poll full responses {result['apiFullResponses']}, "
        f"304s {result['apiNotModified']}; hook failures {result['hookFailures']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--warmup-minutes", type=float, default=None)
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument(
        "--memory-probe",
        type=Path,
        metavar="DIR",
        help="trace the daemon's memory and probe it into DIR at warm-up end and every 5 min",
    )
    parser.add_argument(
        "--untraced",
        action="store_true",
        help="with --memory-probe: no tracemalloc, so RSS is the daemon's own",
    )
    args = parser.parse_args()
    warmup = args.warmup_minutes
    if warmup is None:
        warmup = min(10.0, args.minutes / 4)
    if not 0 < warmup < args.minutes:
        parser.error("--warmup-minutes must be above 0 and below --minutes")
    print(
        f"soak: 20 monitors over five sources, 3 sessions, {args.minutes:g} min "
        f"(warm-up {warmup:g} min)",
        flush=True,
    )
    soak = Soak(args.minutes, warmup, args.memory_probe, traced=not args.untraced)
    try:
        result = soak.run()
    finally:
        soak.close()
    print_verdicts(result)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()

"""Idle cost: a daemon with 20 monitors over all five sources and nothing changing.

Run: .venv/bin/python benchmarks/bench_idle.py [--seconds 60] [--warmup 5]
     [--without-file-monitors] [--no-polls]

``--no-polls`` sets every interval to an hour (the schedules fire at night anyway), so the
window holds no poll and the figure is the cost beyond the polls, read directly; without
it the file monitors re-hash every 30 s and the rest poll every 5 minutes.

The workspace is a git clone (for ``incoming-changes``) holding 8 file monitors of 50
files each (event-driven), 4 command monitors and 4 API monitors (a local HTTP server)
at ``interval: 5m``, 2 schedules that fire at night and 2 ``incoming-changes``; one
session is open (the real ``session start`` hook) and one ``events follow`` runs for it.
After the warm-up (the first observations, the follower attaching) nothing changes; over
the window it reads from /proc the CPU time of the daemon and its children and of the
follower, and their voluntary context switches (each a wake from sleep), per thread.

Goals: the daemon and its children < 1 CPU s per hour beyond the polls themselves (the
command and API runs, a daemon tick per ``--poll-ms``), no wakeup without a reason;
the idle follower makes no wakeups but its heartbeat (one per 10 s).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from _daemon import BenchDaemon

HOST = "bench-idle"
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU time of ``pid``'s threads and of the children it has waited for, in seconds.

    The threads' time is read from ``/proc/<pid>/task/*/schedstat`` (nanoseconds): an
    idle daemon spends a few clock ticks a minute, and ``utime``/``stime`` count whole
    ticks (10 ms), too coarse to tell 0.8 from 1.2 CPU s/hour over five minutes.
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cutime, cstime = (int(value) for value in fields[13:15])
    threads_ns = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            threads_ns += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended: its time is counted in stat, not here
    return threads_ns / 1e9 + (cutime + cstime) / TICKS_PER_S


def switches(pid: int) -> dict[str, int]:
    """Voluntary context switches per thread (``name/tid``) of ``pid``."""
    found: dict[str, int] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{task}/status").read_text()
        except FileNotFoundError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        name = fields["Name"].strip()
        found[f"{name}/{task}"] = int(fields["voluntary_ctxt_switches"])
    return found


class _Quiet(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        _Quiet.hits += 1
        body = b'{"state": "unchanged"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return


def git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def monitors(url: str, files: bool, no_polls: bool) -> dict[str, str]:
    # ``no_polls``: every interval an hour, so the window holds no poll at all and what
    # the daemon spends is what it costs beyond its polls.
    every = "  interval: 1h\n" if no_polls else ""
    poll = "  interval: 1h\n" if no_polls else "  interval: 5m\n"
    found: dict[str, str] = {}
    for index in range(8 if files else 0):
        found[f"files-{index}"] = (
            f"watch:\n  type: file-fingerprint\n  globs: 'tree/d{index}/*.txt'\n{every}"
        )
    command = f"['{sys.executable}', -c, 'print(1)']"
    for index in range(4):
        found[f"command-{index}"] = f"watch:\n  type: command-poll\n  command: {command}\n{poll}"
        found[f"api-{index}"] = f"watch:\n  type: api-poll\n  url: {url}/{index}\n{poll}"
    for index in range(2):
        found[f"nightly-{index}"] = f"watch:\n  type: schedule\n  cron: '{index} 3 * * *'\n"
        found[f"incoming-{index}"] = (
            f"watch:\n  type: incoming-changes\n  paths: ['src{index}/**']\n{every}"
        )
    return found


def populate(bench: BenchDaemon) -> None:
    """The watched tree, the git clone for ``incoming-changes`` and the approvals."""
    for index in range(8):
        folder = bench.root / "tree" / f"d{index}"
        folder.mkdir(parents=True)
        for number in range(50):
            (folder / f"f{number}.txt").write_text(f"{number}\n")
    upstream = bench.base / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    for index in range(2):
        (upstream / f"src{index}").mkdir()
        (upstream / f"src{index}" / "app.py").write_text("v1\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "start")
    git(bench.root, "init", "-q", "-b", "main")
    git(bench.root, "remote", "add", "origin", str(upstream))
    git(bench.root, "fetch", "-q", "origin")
    git(bench.root, "reset", "-q", "origin/main")
    git(bench.root, "branch", "-q", "--set-upstream-to=origin/main")
    for index in range(4):
        bench.cli("monitor", "approve", "--yes", f"command-{index}")


def measure(pids: dict[str, int], seconds: float) -> dict[str, dict[str, object]]:
    cpu0 = {name: cpu_s(pid) for name, pid in pids.items()}
    sw0 = {name: switches(pid) for name, pid in pids.items()}
    time.sleep(seconds)
    report: dict[str, dict[str, object]] = {}
    for name, pid in pids.items():
        cpu = cpu_s(pid) - cpu0[name]
        after = switches(pid)
        per_thread = {
            thread: (count - sw0[name].get(thread, 0)) * 60 / seconds
            for thread, count in after.items()
        }
        report[name] = {
            "cpuSecondsPerHour": round(cpu * 3600 / seconds, 2),
            "wakeupsPerMinute": round(sum(per_thread.values()), 1),
            "wakeupsPerMinuteByThread": {
                thread: round(rate, 1) for thread, rate in per_thread.items() if rate
            },
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument(
        "--without-file-monitors",
        action="store_true",
        help="leave out the 8 file monitors (the file watcher's cost apart from the rest)",
    )
    parser.add_argument(
        "--no-polls",
        action="store_true",
        help="every monitor's interval an hour: the cost beyond the polls, read directly",
    )
    args = parser.parse_args()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    bench = BenchDaemon(monitors(url, files=not args.without_file_monitors, no_polls=args.no_polls))
    follow: subprocess.Popen[bytes] | None = None
    try:
        populate(bench)
        bench.start()
        session_id = bench.open_session(HOST)
        follow = subprocess.Popen(
            [sys.executable, "-m", "agentmonitors", "events", "follow", "--session", session_id],
            cwd=bench.root,
            env=bench.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(args.warmup)
        assert bench.process is not None
        hits = _Quiet.hits
        report = measure({"daemon": bench.process.pid, "follower": follow.pid}, args.seconds)
        report["polls"] = {"apiRequestsInWindow": _Quiet.hits - hits}
        print(json.dumps(report, indent=2))
        daemon, follower = report["daemon"], report["follower"]
        what = "with no poll due (goal < 1)" if args.no_polls else "polls included"
        print(
            f"daemon + children: {daemon['cpuSecondsPerHour']} CPU s/hour {what},"
            f" {daemon['wakeupsPerMinute']} wakeups/min"
        )
        print(
            f"idle follower: {follower['cpuSecondsPerHour']} CPU s/hour, "
            f"{follower['wakeupsPerMinute']} wakeups/min (goal: its heartbeat only, 6/min)"
        )
    finally:
        if follow is not None:
            follow.terminate()
            follow.wait(10)
        bench.close()
        server.shutdown()


if __name__ == "__main__":
    main()

"""Each polling source through a real daemon process: a scripted run of changes, exact events.

The daemon runs in its own process on its real socket and database; only its clock is the
test's (``clocked_daemon.py``), so intervals, backoff and cron minutes are stepped through
instead of slept through. Every tick is asked for over the socket (``daemon.tick``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon, ms
from tests.fixtures.example_source.install import install_example

pytestmark = pytest.mark.slow


Run = Callable[..., CliResult]


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    return isolated_environment


@pytest.fixture
def daemon(workspace: Path, tmp_path: Path) -> Iterator[ClockedDaemon]:
    process = ClockedDaemon(workspace, tmp_path / "clock")
    yield process
    if process.process is not None:
        process.process.kill()
        process.process.communicate(timeout=10)


def add_monitor(root: Path, monitor_id: str, frontmatter: str, body: str = "React.") -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(f"---\n{frontmatter.strip()}\n---\n{body}\n")
    # The user wrote it: they approve what it runs or fetches, as they would.
    assert main(["monitor", "approve", "--yes", "--all", "--workspace", str(root)]) == 0


# --------------------------------------------------------------------------- api-poll


class StatusServer:
    """127.0.0.1 HTTP server: one JSON document at /status, behind a bearer token."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.body: Any = {}
        self.status = 200
        self.requests = 0
        self.unauthorized = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                outer.requests += 1
                if self.headers.get("Authorization") != f"Bearer {outer.token}":
                    outer.unauthorized += 1
                    status, body = 401, b'{"error": "unauthorized"}'
                elif outer.status != 200:
                    status, body = outer.status, b'{"error": "try later"}'
                else:
                    status, body = 200, json.dumps(outer.body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/status"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_api_poll_keyed_collection_errors_and_backoff(
    workspace: Path, daemon: ClockedDaemon
) -> None:
    token = "tok-5f1e9a77c3d2-never-stored"
    server = StatusServer(token)
    try:
        add_monitor(
            workspace,
            "builds",
            f"""
watch:
  type: api-poll
  url: {server.url}
  interval: 1m
  auth:
    type: bearer
    token-env: BUILDS_TOKEN
  change-detection:
    strategy: json-diff
    collection:
      path: builds
      key: id
""",
        )
        server.body = {"builds": [{"id": 1, "state": "running"}]}
        daemon.start({"BUILDS_TOKEN": token})
        assert daemon.new_events() == []  # the first observation is the baseline
        scope = server.url

        # Not due yet: no request goes out.
        before = server.requests
        daemon.advance(30)
        assert daemon.tick()["skippedMonitors"][0]["monitorId"] == "builds"
        assert server.requests == before

        server.body = {"builds": [{"id": 1, "state": "passed"}, {"id": 2, "state": "running"}]}
        daemon.advance(30)
        daemon.tick()
        assert daemon.new_events() == [
            ("builds", f"Item changed: {scope}#1", f"{scope}#1"),
            ("builds", f"Item added: {scope}#2", f"{scope}#2"),
        ]

        # A 500 is an errored observation: no event, nothing baselined, and a backoff
        # that never retries sooner than the 1 m interval.
        server.status = 500
        server.body = {"builds": [{"id": 1, "state": "passed"}]}
        daemon.advance(60)
        errored = daemon.tick()["erroredObservations"]
        assert [item["monitorId"] for item in errored] == ["builds"]
        assert "500" in errored[0]["message"]
        assert daemon.new_events() == []
        requests = server.requests
        for wait in (2, 5, 50):
            daemon.advance(wait)
            daemon.tick()
            assert server.requests == requests  # still backing off

        # The server recovers; the change is measured against the last good response.
        server.status = 200
        daemon.advance(3)
        assert daemon.tick()["erroredObservations"] == []
        assert daemon.new_events() == [("builds", f"Item removed: {scope}#2", f"{scope}#2")]

        daemon.advance(60)
        daemon.tick()
        assert daemon.new_events() == []
        # A baseline stores nothing to tell: its history row says no-change.
        assert daemon.results("builds") == [
            "no-change",
            "triggered",
            "errored",
            "triggered",
            "no-change",
        ]
        assert server.unauthorized == 0
        log = daemon.stop()
    finally:
        server.close()

    # The token reached the server on every request and nowhere else.
    stored = b"".join(
        Path(path).read_bytes()
        for path in (daemon.db, daemon.db + "-wal", daemon.db + "-shm")
        if os.path.exists(path)
    )
    assert token.encode() not in stored
    assert token not in log
    assert "500" in log  # the log did report the failure


def test_api_poll_missing_token_variable_is_an_errored_observation(
    workspace: Path, daemon: ClockedDaemon
) -> None:
    server = StatusServer("unused")
    try:
        add_monitor(
            workspace,
            "needs-token",
            f"""
watch:
  type: api-poll
  url: {server.url}
  interval: 1m
  auth:
    type: bearer
    token-env: NOT_SET_ANYWHERE
""",
        )
        add_monitor(
            workspace,
            "clock",
            """
watch:
  type: schedule
  cron: '* * * * *'
""",
        )
        daemon.start()
        daemon.advance(60)
        result = daemon.tick()
        messages = {item["monitorId"]: item["message"] for item in result["erroredObservations"]}
        assert "NOT_SET_ANYWHERE" in messages["needs-token"]
        assert server.requests == 0
        # Every other monitor keeps running.
        assert [event[0] for event in daemon.new_events()] == ["clock", "clock"]
    finally:
        server.close()


# --------------------------------------------------------------------------- command-poll


CHECK = """
import pathlib, sys, time
state = pathlib.Path(sys.argv[1]).read_text().strip()
if state == "hang":
    time.sleep(30)
print("release:", state)
"""


def test_command_poll_changes_health_and_recovery(workspace: Path, daemon: ClockedDaemon) -> None:
    (workspace / "check.py").write_text(CHECK)
    state = workspace / "state.txt"
    state.write_text("v1")
    add_monitor(
        workspace,
        "release",
        f"""
watch:
  type: command-poll
  command: ['{sys.executable}', check.py, state.txt]
  interval: 1m
  timeout: 1s
""",
    )
    daemon.start()
    assert daemon.new_events() == []

    state.write_text("v2")
    daemon.advance(60)
    daemon.tick()
    events = daemon.new_events()
    assert [(monitor, title.split(":")[0]) for monitor, title, _ in events] == [
        ("release", "Command output changed")
    ]
    object_key = events[0][2]

    # A run that times out is a failure: errored (with its reason) each time it
    # fails, and one event on the edge.
    state.write_text("hang")
    for _ in range(2):
        daemon.advance(60)
        errored = daemon.tick()["erroredObservations"]
        assert errored == [{"monitorId": "release", "message": "Command timed out after 1000ms"}]
    failing = daemon.new_events()
    assert [title.split(":")[0] for _, title, _ in failing] == ["Command failing"]

    # Back to the last good output: recovered, and no output change.
    state.write_text("v2")
    daemon.advance(60)
    daemon.tick()
    assert [title.split(":")[0] for _, title, _ in daemon.new_events()] == ["Command recovered"]

    state.write_text("v3")
    daemon.advance(60)
    daemon.tick()
    assert [(title.split(":")[0], key) for _, title, key in daemon.new_events()] == [
        ("Command output changed", object_key)
    ]


# --------------------------------------------------------------------------- schedule

DOWN_UNTIL = "2026-12-01T10:41:00Z"


def test_schedule_fires_once_per_matching_minute_without_backfill(
    workspace: Path, daemon: ClockedDaemon
) -> None:
    add_monitor(
        workspace,
        "standup",
        """
watch:
  type: schedule
  cron: '*/5 * * * *'
  label: Five-minute check
""",
    )
    add_monitor(
        workspace,
        "night-job",
        """
watch:
  type: schedule
  cron: '30 2 * * *'
  timezone: America/New_York
""",
    )
    daemon.start()  # 10:20:00 UTC: the standup fires in this minute
    assert daemon.new_events() == [("standup", "Five-minute check", "*/5 * * * *")]

    script: list[tuple[str, list[tuple[str, str, str | None]]]] = [
        ("2026-12-01T10:20:40Z", []),  # same minute: already ran
        ("2026-12-01T10:21:00Z", []),
        ("2026-12-01T10:25:59Z", [("standup", "Five-minute check", "*/5 * * * *")]),
        # Down for a quarter of an hour: 10:30 … 10:40 are not replayed.
        (DOWN_UNTIL, []),
        ("2026-12-01T10:45:01Z", [("standup", "Five-minute check", "*/5 * * * *")]),
        # Running but asleep (or stopped) until 11:02: 10:50 … 11:00 are one catch-up
        # run, not four, and the next fire is on time.
        ("2026-12-01T11:02:30Z", [("standup", "Five-minute check", "*/5 * * * *")]),
        ("2026-12-01T11:03:00Z", []),
        ("2026-12-01T11:05:00Z", [("standup", "Five-minute check", "*/5 * * * *")]),
        # Spring forward in New York: 02:30 does not exist that day, the job runs at 03:00.
        ("2027-03-14T07:00:10Z", [("night-job", "Scheduled trigger: 30 2 * * *", "30 2 * * *")]),
        ("2027-03-14T07:30:00Z", []),
    ]
    for moment, expected in script:
        if moment == DOWN_UNTIL:  # no daemon across the gap
            daemon.stop()
            daemon.set_time(ms(moment))
            daemon.start()
        daemon.set_time(ms(moment))
        daemon.tick()
        got = [event for event in daemon.new_events() if event[0] != "standup" or moment < "2027"]
        assert got == expected, moment


# --------------------------------------------------------------------------- incoming-changes


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        },
    ).stdout


def commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def test_incoming_changes_pull_merge_and_local_commit(
    isolated_environment: Path, tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    commit(upstream, "start", {"src/app.py": "v1\n", "docs/readme.md": "hello\n"})
    work = isolated_environment / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(work))
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    assert run_cli("init", "--enable-only").code == 0
    add_monitor(
        work,
        "upstream-src",
        """
watch:
  type: incoming-changes
  paths: ['src/**']
""",
    )
    daemon = ClockedDaemon(work, tmp_path / "clock")
    try:
        daemon.start()
        assert daemon.new_events() == []
        assert daemon.results("upstream-src") == ["no-change"]

        commit(upstream, "change app", {"src/app.py": "v2\n"})
        git(work, "pull", "-q", "--ff-only")
        daemon.advance(30)
        daemon.tick()
        (event,) = daemon.new_events()
        assert event[0] == "upstream-src"
        assert "src/app.py" in event[1]

        # An update that touches only files outside paths moves on silently.
        commit(upstream, "docs only", {"docs/readme.md": "hello again\n"})
        git(work, "pull", "-q", "--ff-only")
        daemon.advance(30)
        daemon.tick()
        assert daemon.new_events() == []

        # A local commit is an advance too; so is a merge of diverged histories.
        commit(work, "local work", {"src/local.py": "mine\n"})
        daemon.advance(30)
        daemon.tick()
        assert [("src/local.py" in title) for _, title, _ in daemon.new_events()] == [True]

        commit(upstream, "upstream feature", {"src/feature.py": "theirs\n"})
        git(work, "pull", "-q", "--no-rebase", "--no-edit")
        daemon.advance(30)
        daemon.tick()
        merged = daemon.new_events()
        assert len(merged) == 1 and "src/feature.py" in merged[0][1]

        daemon.advance(30)
        daemon.tick()
        assert daemon.new_events() == []
        assert daemon.results("upstream-src") == [
            "no-change",
            "triggered",
            "no-change",
            "triggered",
            "triggered",
            "no-change",
        ]
    finally:
        if daemon.process is not None:
            daemon.stop()


# --------------------------------------------------------------------------- plugins


def test_an_installed_plugin_source_runs_in_the_daemon(
    workspace: Path, daemon: ClockedDaemon, tmp_path: Path
) -> None:
    site = install_example(tmp_path / "site")
    add_monitor(
        workspace,
        "echo",
        """
watch:
  type: example-echo
  message: hello from a plugin
""",
    )
    daemon.start({"PYTHONPATH": str(site)})
    assert [event[0] for event in daemon.new_events()] == ["echo"]
    daemon.advance(30)
    daemon.tick()
    assert [event[0] for event in daemon.new_events()] == ["echo"]


# --------------------------------------------------------------------------- bad input


def test_broken_monitors_back_off_and_the_rest_keep_running(
    workspace: Path, daemon: ClockedDaemon, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    (tmp_path / "plain").mkdir()
    add_monitor(
        workspace,
        "refused",
        f"watch:\n  type: api-poll\n  url: http://127.0.0.1:{closed_port}/x\n  interval: 1m\n",
    )
    add_monitor(
        workspace,
        "not-a-repo",
        f"watch:\n  type: incoming-changes\n  paths: ['**']\n  cwd: {tmp_path / 'plain'}\n",
    )
    add_monitor(
        workspace,
        "missing-tool",
        "watch:\n  type: command-poll\n  command: [agentmonitors-no-such-tool]\n  interval: 1m\n",
    )
    add_monitor(workspace, "clock", "watch:\n  type: schedule\n  cron: '* * * * *'\n")
    daemon.start()
    errored = {row[0]: row[1] for row in daemon.query(
        "SELECT monitor_id, observation_data FROM observation_history WHERE result = 'errored'"
    )}  # fmt: skip
    assert set(errored) == {"refused", "not-a-repo", "missing-tool"}
    assert "127.0.0.1" in errored["refused"]
    assert "not a git repository" in errored["not-a-repo"].lower()
    assert "agentmonitors-no-such-tool" in errored["missing-tool"]
    # A command that cannot start is a failure with one event; the schedule fires.
    assert sorted((event[0], event[1].split(":")[0]) for event in daemon.new_events()) == [
        ("clock", "Scheduled trigger"),
        ("missing-tool", "Command failing"),
    ]
    # Backing off: the broken ones are not retried before 5 s; the rest run on time.
    daemon.advance(3)
    skipped = {item["monitorId"] for item in daemon.tick()["skippedMonitors"]}
    assert {"refused", "not-a-repo", "missing-tool"} <= skipped
    daemon.advance(60)
    result = daemon.tick()
    assert {item["monitorId"] for item in result["erroredObservations"]} == {
        "refused",
        "not-a-repo",
        "missing-tool",
    }
    assert [event[0] for event in daemon.new_events()] == ["clock"]
    assert daemon.process is not None and daemon.process.poll() is None

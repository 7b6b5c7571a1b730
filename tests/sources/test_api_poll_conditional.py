"""api-poll's conditional requests, through a real daemon against a server that counts.

An endpoint that gave an ``ETag`` or a ``Last-Modified`` is asked again with
``If-None-Match`` / ``If-Modified-Since``; its 304 is an unchanged observation, so a
team polling all day costs the endpoint (and its rate limit) almost no full answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon

pytestmark = pytest.mark.slow


class CountingServer:
    """127.0.0.1: ``/etag`` validates by ETag, ``/dated`` by Last-Modified; counts answers."""

    def __init__(self) -> None:
        self.version = 1
        self.full: dict[str, int] = {"/etag": 0, "/dated": 0}
        self.not_modified: dict[str, int] = {"/etag": 0, "/dated": 0}
        self.conditions: list[tuple[str, str | None, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path
                etag = f'"v{outer.version}"'
                # One second per version: the HTTP date's resolution.
                modified = formatdate(1_700_000_000 + outer.version, usegmt=True)
                sent_etag = self.headers.get("If-None-Match")
                sent_since = self.headers.get("If-Modified-Since")
                outer.conditions.append((path, sent_etag, sent_since))
                unchanged = (path == "/etag" and sent_etag == etag) or (
                    path == "/dated" and sent_since == modified
                )
                if unchanged:
                    outer.not_modified[path] += 1
                    self.send_response(304)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.full[path] += 1
                body = f"release {outer.version}\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                if path == "/etag":
                    self.send_header("ETag", etag)
                else:
                    self.send_header("Last-Modified", modified)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    return isolated_environment


@pytest.fixture
def server() -> Iterator[CountingServer]:
    counting = CountingServer()
    yield counting
    counting.close()


@pytest.fixture
def daemon(workspace: Path, tmp_path: Path) -> Iterator[ClockedDaemon]:
    process = ClockedDaemon(workspace, tmp_path / "clock")
    yield process
    if process.process is not None:
        process.process.kill()
        process.process.communicate(timeout=10)


def add_monitor(root: Path, monitor_id: str, url: str) -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(
        f"---\nwatch:\n  type: api-poll\n  url: {url}\n  interval: 1m\n---\nRead the notes.\n"
    )


def test_validators_are_sent_back_and_a_304_is_unchanged(
    workspace: Path, server: CountingServer, daemon: ClockedDaemon
) -> None:
    add_monitor(workspace, "by-etag", server.url("/etag"))
    add_monitor(workspace, "by-date", server.url("/dated"))
    assert main(["monitor", "approve", "--yes", "--all", "--workspace", str(workspace)]) == 0
    daemon.start()
    assert daemon.new_events() == []  # the first answers are the baselines
    assert server.full == {"/etag": 1, "/dated": 1}

    # Nothing changed: each endpoint is asked conditionally and answers 304, no body.
    for _ in range(3):
        daemon.advance(60)
        assert daemon.tick()["erroredObservations"] == []
    assert daemon.new_events() == []
    assert server.full == {"/etag": 1, "/dated": 1}
    assert server.not_modified == {"/etag": 3, "/dated": 3}
    assert sorted(server.conditions[-2:]) == [
        ("/dated", None, "Tue, 14 Nov 2023 22:13:21 GMT"),
        ("/etag", '"v1"', None),
    ]

    # A new version is a full answer and one event each, diffed against the stored body.
    server.version = 2
    daemon.advance(60)
    assert daemon.tick()["erroredObservations"] == []
    assert sorted(event[0] for event in daemon.new_events()) == ["by-date", "by-etag"]
    assert server.full == {"/etag": 2, "/dated": 2}

    # The new validators are the ones sent next: unchanged again, nothing told twice.
    daemon.advance(60)
    daemon.tick()
    assert daemon.new_events() == []
    assert server.full == {"/etag": 2, "/dated": 2}
    assert server.not_modified == {"/etag": 4, "/dated": 4}
    assert daemon.results("by-etag") == [
        "no-change",
        "no-change",
        "no-change",
        "no-change",
        "triggered",
        "no-change",
    ]
    daemon.stop()


def add_composite(root: Path, monitor_id: str, server: CountingServer) -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: api-poll\n  interval: 1m\n  change-detection:\n"
        "    composite:\n      object-key: board\n      parts:\n"
        f"        - id: tagged\n          url: {server.url('/etag')}\n"
        f"        - id: dated\n          url: {server.url('/dated')}\n"
        "---\nRead the board.\n"
    )


def test_each_composite_part_is_asked_conditionally(
    workspace: Path, server: CountingServer, daemon: ClockedDaemon
) -> None:
    add_composite(workspace, "board", server)
    assert main(["monitor", "approve", "--yes", "--all", "--workspace", str(workspace)]) == 0
    daemon.start()
    assert daemon.new_events() == []  # the first rendering is the baseline
    assert server.full == {"/etag": 1, "/dated": 1}

    # Nothing changed: each part sends back its own validators and answers 304; the
    # stored bodies render the same snapshot, so nothing is reported.
    for _ in range(3):
        daemon.advance(60)
        assert daemon.tick()["erroredObservations"] == []
    assert daemon.new_events() == []
    assert server.full == {"/etag": 1, "/dated": 1}
    assert server.not_modified == {"/etag": 3, "/dated": 3}
    assert sorted(server.conditions[-2:]) == [
        ("/dated", None, "Tue, 14 Nov 2023 22:13:21 GMT"),
        ("/etag", '"v1"', None),
    ]

    # A new version is a full answer per part and one event, diffed against the baseline.
    server.version = 2
    daemon.advance(60)
    assert daemon.tick()["erroredObservations"] == []
    assert [event[0] for event in daemon.new_events()] == ["board"]
    assert server.full == {"/etag": 2, "/dated": 2}
    (diff,) = daemon.query("SELECT diff_text FROM monitor_events WHERE monitor_id = 'board'")
    assert diff[0] == "- 2: release 1\n+ 2: release 2\n- 6: release 1\n+ 6: release 2"

    # The new validators are sent next: 304s again, the stored new bodies, nothing twice.
    daemon.advance(60)
    assert daemon.tick()["erroredObservations"] == []
    assert daemon.new_events() == []
    assert server.full == {"/etag": 2, "/dated": 2}
    assert server.not_modified == {"/etag": 4, "/dated": 4}
    assert daemon.results("board") == ["no-change"] * 4 + ["triggered", "no-change"]
    daemon.stop()

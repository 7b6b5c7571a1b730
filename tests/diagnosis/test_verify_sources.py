"""``verify`` passes end to end for a scaffolded monitor of each bundled source type.

Each run is a real ``agentmonitors verify`` process that boots a real throwaway daemon
over the test's workspace; the monitors poll every second so the budgets are seconds.
"""

from __future__ import annotations

import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.diagnosis.verify_helpers import (
    approve,
    process_alive,
    scaffold,
    verify,
    workspace_files,
)

# Each test runs verify and its daemon as real processes, one to a few seconds each.
pytestmark = pytest.mark.slow

STAGE_NAMES = ["daemon", "session", "baseline", "trigger", "observe", "materialize", "deliver"]


def assert_passed(result: object, monitor_id: str) -> None:
    from tests.diagnosis.verify_helpers import Verified

    assert isinstance(result, Verified)
    report = result.report
    assert result.code == 0, result.out + result.err
    assert report["ok"] is True
    assert report["failure"] is None
    assert report["monitorId"] == monitor_id
    assert [stage["name"] for stage in report["stages"]] == STAGE_NAMES
    assert {stage["status"] for stage in report["stages"]} == {"pass"}
    assert f"### {monitor_id} (normal)" in report["additionalContext"]
    assert "agentmonitors events ack --session" in report["additionalContext"]
    assert isinstance(report["elapsedMs"], int)
    # Progress went to stderr as plain lines (stderr is a pipe here, not a terminal).
    assert "[verify] deliver: pass: " in result.err
    pid = result.daemon_pid
    assert pid is not None and not process_alive(pid)


def test_file_fingerprint_passes_with_the_automatic_trigger(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    scaffold(
        work,
        "ts-files",
        "file-fingerprint",
        {r"'\*\*/\*\.ts'": "'src/**/*.ts'", r"# interval: 30s": "interval: 1s"},
    )
    before = workspace_files(work)

    result = verify(work, "ts-files")

    assert_passed(result, "ts-files")
    assert "File created:" in result.report["additionalContext"]
    assert "agentmonitors-verify-" in result.report["additionalContext"]
    assert result.stage("trigger")["detail"].startswith("created src/agentmonitors-verify-")
    # The scratch file is gone and nothing else appeared in the workspace (no data dir,
    # no database: the throwaway daemon kept everything in its own temporary folder).
    assert workspace_files(work) == before
    assert not list((work.parent / "home").rglob("*.db"))


def test_a_literal_glob_is_edited_and_restored(isolated_environment: Path) -> None:
    work = isolated_environment
    config = work / "config.toml"
    config.write_text("answer = 42\n")
    stat = config.stat()
    scaffold(
        work,
        "config",
        "file-fingerprint",
        {r"'\*\*/\*\.ts'": "'config.toml'", r"# interval: 30s": "interval: 1s"},
    )

    result = verify(work)

    assert_passed(result, "config")
    assert result.stage("trigger")["detail"] == "edited config.toml (restored afterwards)"
    assert config.read_text() == "answer = 42\n"
    assert config.stat().st_mtime_ns == stat.st_mtime_ns


class _Body(http.server.BaseHTTPRequestHandler):
    body_file: Path

    def do_GET(self) -> None:
        payload = self.body_file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def status_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    body = tmp_path / "status.json"
    body.write_text('{"state": "green"}')
    handler = type("Handler", (_Body,), {"body_file": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/status.json", body
    finally:
        server.shutdown()
        server.server_close()


def test_api_poll_passes_when_the_trigger_changes_the_response(
    isolated_environment: Path, status_server: tuple[str, Path]
) -> None:
    work = isolated_environment
    url, body = status_server
    scaffold(
        work,
        "status",
        "api-poll",
        {r"'https://example.com/status.json'": f"'{url}'", r"interval: 5m": "interval: 1s"},
    )
    approve(work, "status")

    result = verify(work, "status", "--trigger-cmd", f'echo \'{{"state": "red"}}\' > {body}')

    assert_passed(result, "status")
    assert result.stage("trigger")["detail"].startswith("ran: echo")


def test_command_poll_passes_when_the_trigger_edits_what_it_reads(
    isolated_environment: Path, tmp_path: Path
) -> None:
    work = isolated_environment
    watched = tmp_path / "version.txt"
    watched.write_text("1.0\n")
    scaffold(
        work,
        "version",
        "command-poll",
        {
            r"    - 'git'\n    - 'ls-remote'\n    - 'origin'\n    - 'refs/heads/main'": (
                f"    - 'cat'\n    - '{watched}'"
            ),
            r"interval: 5m": "interval: 1s",
        },
    )
    approve(work, "version")

    result = verify(work, "version", "--trigger-cmd", f"echo 2.0 > {watched}")

    assert_passed(result, "version")


def _git(work: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)


def test_incoming_changes_passes_when_the_trigger_commits(isolated_environment: Path) -> None:
    work = isolated_environment
    _git(work, "init", "-q", "-b", "main")
    _git(work, "config", "user.email", "test@example.com")
    _git(work, "config", "user.name", "Test")
    (work / "docs" / "specs").mkdir(parents=True)
    (work / "docs" / "specs" / "a.md").write_text("one\n")
    _git(work, "add", "docs")
    _git(work, "commit", "-q", "-m", "first")
    scaffold(work, "specs", "incoming-changes", {r"  # branch: main": "  interval: 1s"})

    commit = "echo two >> docs/specs/a.md && git add docs/specs/a.md && git commit -q -m second"
    result = verify(work, "specs", "--trigger-cmd", commit)

    assert_passed(result, "specs")
    assert "docs/specs/a.md" in result.report["additionalContext"]


def test_schedule_passes_when_its_cron_fires_again(isolated_environment: Path) -> None:
    work = isolated_environment
    scaffold(work, "tick", "schedule", {r"cron: '0 9 \* \* 1-5'": "cron: '* * * * *'"})

    # A cron that fires every minute: the next firing after the trigger is the proof.
    result = verify(work, "tick", "--trigger-cmd", "true", timeout=200)

    assert_passed(result, "tick")
    assert "Scheduled trigger: * * * * *" in result.report["additionalContext"]

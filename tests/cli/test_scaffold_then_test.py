"""``init NAME --type T`` then ``monitor test`` on the untouched scaffold, for every type.

The project is what a scaffold expects to find: a git repository on ``main`` holding
TypeScript files and ``docs/specs``, with an ``origin`` (command-poll's example asks it
for ``main``; without one that command fails, and the monitor says so). api-poll's
example URL is the one line changed, to a server on 127.0.0.1, because the test has no
network.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

Run = Callable[..., CliResult]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    (root / "src").mkdir()
    (root / "src" / "index.ts").write_text("export const answer = 42;\n")
    (root / "docs" / "specs").mkdir(parents=True)
    (root / "docs" / "specs" / "api.md").write_text("# API\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    origin = root.parent / "origin.git"
    git(root.parent, "init", "-q", "--bare", str(origin))
    git(root, "remote", "add", "origin", str(origin))
    git(root, "push", "-q", "origin", "main")
    assert run_cli("init", "--enable-only").code == 0
    return root


@pytest.fixture
def status_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = b'{"status": "green", "incidents": []}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/status.json"
    server.shutdown()
    server.server_close()


EXPECTED = {
    "file-fingerprint": "Baseline established.",
    "api-poll": "Baseline established.",
    "command-poll": "Baseline established.",
    "schedule": "Title: Scheduled trigger: 0 9 * * 1-5",
    "incoming-changes": "Baseline established.",
}


@pytest.mark.parametrize("source_type", sorted(EXPECTED))
def test_a_fresh_scaffold_passes_monitor_test(
    project: Path, run_cli: Run, status_server: str, source_type: str
) -> None:
    created = run_cli("init", "probe", "--yes", "--type", source_type)
    assert created.code == 0, created.err
    path = project / ".claude" / "monitors" / "probe" / "MONITOR.md"
    if source_type == "api-poll":
        text = path.read_text()
        assert "https://example.com/status.json" in text
        path.write_text(text.replace("https://example.com/status.json", status_server))
        # Another host than the one approved at init: the user approves the edit.
        assert run_cli("monitor", "approve", "--yes", "probe").code == 0

    result = run_cli("monitor", "test", str(path))
    assert result.code == 0, result.out + result.err
    assert result.out.startswith(f'Testing monitor "Probe" (source: {source_type})...')
    assert EXPECTED[source_type] in result.out
    if source_type == "api-poll":
        assert "\n  HTTP 200 (36 bytes)\n" in result.out
    if source_type == "command-poll":
        # The scaffold asks the origin for main: git answers with its tip.
        assert "\n  Exit code 0 (" in result.out
    assert "Error" not in result.err
    assert "Warning" not in result.err
    assert run_cli("validate").code == 0

"""What the security tests share: a recording HTTP server, a project, a real ``daemon once``.

Each test builds a hostile repository in its temporary folder and drives the CLI as a
user would; "it did not happen" is a marker file that is not there, a server that saw
no request, or bytes that are not in any file we wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class RecordingServer:
    """A local HTTP server that records each request (path and headers) it receives.

    ``routes`` maps a path to ``(status, headers, body)``; any other path is answered
    200 with ``answer(n)`` (``n``: how many requests came so far), as ``content_type``.
    """

    def __init__(
        self,
        routes: dict[str, tuple[int, dict[str, str], str]] | None = None,
        answer: Callable[[int], str] = lambda _count: "ok",
        content_type: str = "text/plain",
    ) -> None:
        self.routes = routes or {}
        self.requests: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                recorder.requests.append({"path": self.path, "headers": dict(self.headers)})
                default = (200, {}, answer(len(recorder.requests)))
                status, headers, body = recorder.routes.get(self.path, default)
                data = body.encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def header_values(self, name: str) -> list[str | None]:
        """The value of header ``name`` in each request received, in order."""
        return [request["headers"].get(name) for request in self.requests]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.origin + path

    def __enter__(self) -> RecordingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def recording_server(
    routes: dict[str, tuple[int, dict[str, str], str]] | None = None,
) -> Iterator[RecordingServer]:
    with RecordingServer(routes) as server:
        yield server


def add_monitor(root: Path, monitor_id: str, text: str) -> Path:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MONITOR.md"
    path.write_text(text)
    return path


def agentmonitors(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """The installed CLI as a separate process in ``root``, as a user runs it."""
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "agentmonitors"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PWD": str(root), **(env or {})},
    )


def once_json(root: Path) -> dict[str, Any]:
    """One real ``daemon once --force`` in ``root``; its JSON report (which a tick with a
    failing monitor still prints, exiting 1 with the one line that names them)."""
    done = agentmonitors(root, "daemon", "once", "--force", "--format", "json")
    failing = done.returncode == 1 and done.stderr.startswith("error: ")
    assert done.returncode == 0 or (failing and "monitor(s) failing" in done.stderr), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def blocked_ids(report: dict[str, Any]) -> list[str]:
    return [
        row["monitorId"]
        for row in report["skippedMonitors"]
        if row.get("reason") == "blocked: awaiting-approval"
    ]


def files_holding(folder: Path, needle: bytes) -> list[Path]:
    """Every file under ``folder`` whose bytes contain ``needle``."""
    found = []
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            try:
                if needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found

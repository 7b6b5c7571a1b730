"""Nothing agentmonitors writes holds a secret: not the compiled-definition cache, the
database, hook-state files, heartbeats, the approval ledger or the daemon's log.

An api-poll monitor fetches ``http://user:<password>@127.0.0.1:<port>/x`` from a real
local server; ``validate``, ``daemon once`` (a real process) and a daemon booted by
``session start`` all run it; the server sees the credentials every time, and no file
under the test's HOME, data or cache folders (the SQLite files read as bytes) holds the
password or its Basic encoding. Agent-declared watches follow the same rule: an ``env``
secret is refused, and listings show env names only.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import DaemonError, call
from agentmonitors.paths import resolve_socket_path
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.security.hostile import RecordingServer
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]

PASSWORD = "s3cretpw"
BASIC = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
ENV_SECRET = "ghp_notarealtokenbutshapedlikeone1234"


def json_answer(count: int) -> str:
    """A body that changes with every request, so each poll is a change."""
    return json.dumps({"status": "ok", "n": count})


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(answer=json_answer, content_type="application/json") as made:
        yield made


def credentialed_url(server: RecordingServer) -> str:
    return f"http://user:{PASSWORD}@127.0.0.1:{server.server.server_address[1]}/x"


def add_monitor(root: Path, monitor_id: str, frontmatter: str) -> Path:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MONITOR.md"
    path.write_text(f"---\n{frontmatter.strip()}\n---\nReact.\n")
    return path


def files_holding(root: Path, needles: list[bytes], skip: set[Path]) -> list[str]:
    """Every regular file under ``root`` (but ``skip``) whose bytes contain a needle."""
    found = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if path in skip or path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            found += [
                f"{path.relative_to(root)}: {needle!r}" for needle in needles if needle in data
            ]
    return found


def hook(command: list[str], payload: dict[str, Any], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_a_url_password_reaches_the_server_and_no_file_we_write(
    isolated_environment: Path, tmp_path: Path, run_cli: Run, server: RecordingServer
) -> None:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    monitor = add_monitor(
        root,
        "status",
        f"watch:\n  type: api-poll\n  url: {credentialed_url(server)}\n  interval: 1s\n",
    )
    add_monitor(root, "notes", 'watch:\n  type: file-fingerprint\n  globs: "notes/*.txt"\n')
    assert run_cli("monitor", "approve", "--yes", "--all").code == 0

    checked = run_cli("validate")
    assert checked.code == 0, checked.err
    assert PASSWORD not in checked.out + checked.err
    # The cache works for the plain monitor and keeps nothing of the one with a password.
    entries = list((root.parent / "home" / ".cache" / "agentmonitors" / "compiled").glob("*"))
    assert len(entries) == 1
    assert "notes" in entries[0].read_text()

    once = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "daemon", "once", "--force"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert once.returncode == 0, once.stderr
    assert server.header_values("Authorization") == [f"Basic {BASIC}"]

    payload = {"session_id": "host-1", "hook_event_name": "SessionStart", "cwd": str(root)}
    try:
        code, _out, err = hook(["session", "start"], payload, root)
        assert code == 0, err
        # The booted daemon's own ticks fetch with the same credentials.
        wait_for(lambda: len(server.header_values("Authorization")) >= 3, timeout=30)
        prompt = {**payload, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
        assert hook(["hook", "deliver"], prompt, root)[0] == 0
        end = {**payload, "hook_event_name": "SessionEnd", "reason": "other"}
        assert hook(["session", "end"], end, root)[0] == 0
    finally:
        socket = read_local_state(str(root)).socket
        if socket:
            with contextlib.suppress(DaemonError):
                call(socket, "stop", {})
    assert set(server.header_values("Authorization")) == {f"Basic {BASIC}"}

    leaks = files_holding(tmp_path, [PASSWORD.encode(), BASIC.encode()], skip={monitor})
    assert leaks == []
    # The walk did cover the database, the log and the ledger.
    written = {path.name for path in tmp_path.rglob("*") if path.is_file()}
    assert {"inbox.db"} <= written
    assert any(name.endswith(".log") for name in written), sorted(written)


# --------------------------------------------------------------------------- watches


@pytest.fixture
def daemon_socket(isolated_environment: Path, run_cli: Run) -> Iterator[str]:
    assert run_cli("init", "--enable-only").code == 0
    started = run_cli("daemon", "run", "--detach")
    assert started.code == 0, started.err
    socket = resolve_socket_path(str(isolated_environment))
    yield socket
    with contextlib.suppress(DaemonError):
        call(socket, "stop", {})


def test_a_declared_env_secret_is_refused_and_listings_show_env_names_only(
    isolated_environment: Path, tmp_path: Path, run_cli: Run, daemon_socket: str
) -> None:
    opened = run_cli("session", "open", "--host-session-id", "host-1", "--format", "id")
    assert opened.code == 0, opened.err
    session = opened.out.strip()

    def declare(env: dict[str, str]) -> CliResult:
        scope = {"command": ["sh", "-c", "echo ok"], "interval": "1m", "env": env}
        return run_cli("watch", "command-poll", "--session", session, "--scope", json.dumps(scope))

    refused = declare({"GITHUB_TOKEN": "plainvalue123"})
    assert refused.code == 1
    assert "env.GITHUB_TOKEN" in refused.err
    assert "daemon's environment" in refused.err and "$GITHUB_TOKEN" in refused.err
    shaped = declare({"MODE": ENV_SECRET})
    assert shaped.code == 1
    assert "env.MODE" in shaped.err
    listed = run_cli("watch", "list", "--session", session, "--format", "json")
    assert listed.json() == []

    kept = declare({"MODE": "fast"})
    assert kept.code == 0, kept.err
    (record,) = run_cli("watch", "list", "--session", session, "--format", "json").json()
    assert record["scope"]["env"] == {"MODE": "[redacted]"}
    assert "fast" not in run_cli("watch", "list", "--session", session).out

    call(daemon_socket, "stop", {})
    leaks = files_holding(tmp_path, [b"plainvalue123", ENV_SECRET.encode()], skip=set())
    assert leaks == []

"""Shell completion through click's own protocol, as bash asks for it.

Each test runs the installed ``agentmonitors`` script with ``_AGENTMONITORS_COMPLETE``
set, the way the sourced completion function does, and reads the ``type,value`` lines.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import ping
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.conftest import CliResult
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]
EXE = Path(sys.executable).parent / "agentmonitors"

MONITOR = """---
name: {name}
watch:
  type: file-fingerprint
  globs: "*.md"
---
Body
"""


def complete(words: str, cwd: Path, **env: str) -> list[tuple[str, str]]:
    """The (type, value) pairs click offers for the last word of ``words``."""
    parts = shlex.split(words)
    if words.endswith(" "):
        parts.append("")
    done = subprocess.run(
        [str(EXE)],
        env={
            **os.environ,
            **env,
            "_AGENTMONITORS_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
        },
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pairs = [line.split(",", 1) for line in done.stdout.splitlines() if line]
    return [(kind, value) for kind, value in pairs]


def values(pairs: list[tuple[str, str]]) -> list[str]:
    return [value for kind, value in pairs if kind == "plain"]


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    for monitor_id, name in (("docs", "Docs"), ("deps", "Dependencies"), ("api", "API")):
        folder = isolated_environment / ".claude" / "monitors" / monitor_id
        folder.mkdir(parents=True)
        (folder / "MONITOR.md").write_text(MONITOR.format(name=name))
    return isolated_environment


def test_monitor_commands_complete_monitor_ids(project: Path) -> None:
    assert values(complete("agentmonitors monitor explain ", project)) == ["api", "deps", "docs"]
    assert values(complete("agentmonitors monitor explain d", project)) == ["deps", "docs"]
    assert values(complete("agentmonitors monitor history de", project)) == ["deps"]
    # From a subfolder, the project's monitors still.
    sub = project / "src"
    sub.mkdir()
    assert values(complete("agentmonitors monitor explain a", sub)) == ["api"]
    # --dir points explain at another monitors folder.
    other = project / "elsewhere" / "watched"
    other.mkdir(parents=True)
    (other / "MONITOR.md").write_text(MONITOR.format(name="W"))
    assert values(complete("agentmonitors monitor explain --dir elsewhere ", project)) == [
        "watched"
    ]


def test_monitor_test_completes_ids_then_files(project: Path) -> None:
    assert values(complete("agentmonitors monitor test do", project)) == ["docs"]
    # Nothing matches an id: the shell completes a path instead.
    assert complete("agentmonitors monitor test .cla", project) == [("file", ".cla")]


def test_events_monitor_filter_completes_monitor_ids(project: Path) -> None:
    assert values(complete("agentmonitors events list --monitor a", project)) == ["api"]


@pytest.fixture
def daemon(project: Path, run_cli: Run) -> Iterator[str]:
    started = run_cli("daemon", "start", "--reap-after-ms", "0")
    assert started.code == 0, started.err
    pid = int(started.out.splitlines()[1].split(":")[1])
    socket_path = resolve_socket_path(str(project))
    try:
        yield socket_path
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def test_session_ids_come_from_the_daemon_then_the_database(
    project: Path, daemon: str, run_cli: Run
) -> None:
    opened = [
        run_cli("session", "open", "--host-session-id", host, "--format", "id").out.strip()
        for host in ("host-a", "host-b")
    ]
    assert all(opened)
    listed = run_cli("session", "list").out.splitlines()
    assert listed[0].split() == ["ID", "Status", "Host", "Identity", "Last", "active", "Workspace"]
    assert sorted(line.split()[0] for line in listed[1:]) == sorted(opened)
    for words in (
        "agentmonitors events list --session ",
        "agentmonitors events ack --session ",
        "agentmonitors hook claim --session ",
        "agentmonitors session close ",
    ):
        assert sorted(values(complete(words, project))) == sorted(opened), words
    prefix = opened[0][:-1]
    assert opened[0] in values(complete(f"agentmonitors events list --session {prefix}", project))

    assert run_cli("daemon", "stop").code == 0
    wait_for(lambda: not ping(daemon))
    # No daemon: the ids come from the database, and completing starts no daemon.
    assert sorted(values(complete("agentmonitors events list --session ", project))) == sorted(
        opened
    )
    assert not ping(daemon)


def test_session_completion_never_hangs_on_a_silent_socket(
    project: Path, run_cli: Run, tmp_path: Path
) -> None:
    silent = tmp_path / "silent.sock"
    words = f"agentmonitors events list --socket {silent} --session "
    began = time.monotonic()
    assert complete(words, project) == []  # nothing listens: refused at once
    baseline = time.monotonic() - began
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(silent))
    server.listen(8)  # connections queue and nobody ever answers
    try:
        began = time.monotonic()
        found = complete(words, project)
        waited = time.monotonic() - began
    finally:
        server.close()
    # A Tab press waits well under a manual command's request timeout.
    assert waited - baseline < 1.2
    assert found == []  # no daemon answered and no database exists yet
    assert not os.path.exists(resolve_db_path(str(project)))

"""A cloned repository's own modules and package metadata never run in our processes.

The hostile repository holds a root-level ``filelock.py`` and ``watchfiles.py`` (both
modules the daemon imports) and an ``evil-1.0.dist-info`` registering an
``agentmonitors.sources`` plugin whose module is in the repository; each leaves a
marker file when imported. The daemon booted by ``session start``, ``daemon start``
and ``verify``, and ``python -m agentmonitors`` itself run from the repository, must
leave no marker, and the daemon must run outside the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.workspace import read_local_state, workspace_data_dir
from tests.conftest import CliResult

pytestmark = pytest.mark.slow

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""

EVIL_MONITOR = """---
watch:
  type: evil
---
A monitor over the repository's own plugin source.
"""


def _marking_module(marker: Path) -> str:
    """Leaves ``marker``, then hands over to the real module of that name, if any.

    Handing over keeps a process that imported it working, so what shows is the
    marker, not a crash.
    """
    return (
        "import importlib, os, sys\n"
        f"with open({str(marker)!r}, 'a') as handle:\n"
        "    handle.write(f'{os.getpid()} {os.getcwd()}\\n')\n"
        "here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))"
        " if __file__.endswith('__init__.py') else os.path.dirname(os.path.abspath(__file__))\n"
        "saved = sys.path[:]\n"
        "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
        "del sys.modules[__name__]\n"
        "try:\n"
        "    sys.modules[__name__] = importlib.import_module(__name__)\n"
        "finally:\n"
        "    sys.path[:] = saved\n"
    )


class Hostile:
    def __init__(self, root: Path, markers: Path) -> None:
        self.root = root
        self.markers = markers

    def marks(self) -> list[str]:
        return sorted(path.name for path in self.markers.iterdir())

    def run(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentmonitors", *args],
            cwd=self.root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
            env={**os.environ, **(env or {})},
        )

    def socket(self) -> str:
        socket = read_local_state(str(self.root)).socket
        assert socket is not None
        return socket

    def daemon_pid(self, socket: str) -> int:
        status = call(socket, "status", {})
        assert isinstance(status, dict)
        pid = status["pid"]
        assert isinstance(pid, int)
        return pid

    def assert_daemon_outside(self, pid: int) -> None:
        cwd = os.readlink(f"/proc/{pid}/cwd")
        assert cwd == workspace_data_dir(str(self.root))
        assert not Path(cwd).is_relative_to(self.root)
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
        assert argv[1] == b"-P"


@pytest.fixture
def hostile(
    isolated_environment: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> Iterator[Hostile]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    for monitor, text in (("notes", NOTES), ("evil", EVIL_MONITOR)):
        folder = root / ".claude" / "monitors" / monitor
        folder.mkdir(parents=True)
        (folder / "MONITOR.md").write_text(text)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    markers = tmp_path / "markers"
    markers.mkdir()
    # Written after the in-process `init`: only the processes under test may meet them.
    for module in ("filelock", "watchfiles", "evil_source"):
        (root / f"{module}.py").write_text(_marking_module(markers / module))
    (root / "pip").mkdir()
    (root / "pip" / "__init__.py").write_text(_marking_module(markers / "pip"))
    dist_info = root / "evil-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[agentmonitors.sources]\nevil = evil_source:Source\n"
    )
    repo = Hostile(root, markers)
    yield repo
    socket = read_local_state(str(root)).socket
    if socket and ping(socket):
        call(socket, "stop", {})


def test_session_start_boots_a_daemon_that_imports_nothing_from_the_repository(
    hostile: Hostile,
) -> None:
    payload = {"session_id": "host-1", "hook_event_name": "SessionStart", "cwd": str(hostile.root)}
    # PYTHONPATH=. must not bring the repository back either: the daemon's "." is ours.
    done = hostile.run("session", "start", stdin=json.dumps(payload), env={"PYTHONPATH": "."})
    assert done.returncode == 0, done.stderr
    assert "registered" in done.stderr
    socket = hostile.socket()
    # The daemon has watched and ticked: filelock and watchfiles were imported by then.
    (hostile.root / "notes" / "a.txt").write_text("second\n")
    assert call(socket, "daemon.tick", {})
    assert hostile.marks() == []
    hostile.assert_daemon_outside(hostile.daemon_pid(socket))


def test_daemon_start_runs_the_daemon_outside_the_repository(hostile: Hostile) -> None:
    done = hostile.run("daemon", "start")
    assert done.returncode == 0, done.stderr
    socket = hostile.socket() if read_local_state(str(hostile.root)).socket else None
    pid_line = next(line for line in done.stdout.splitlines() if "Pid:" in line)
    if socket is not None:
        assert call(socket, "daemon.tick", {})
    assert hostile.marks() == []
    hostile.assert_daemon_outside(int(pid_line.split()[-1]))


def test_verify_runs_its_throwaway_daemon_outside_the_repository(hostile: Hostile) -> None:
    done = hostile.run("verify", "notes", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert hostile.marks() == []


def test_plugins_whose_metadata_is_in_the_project_are_skipped(hostile: Hostile) -> None:
    listed = hostile.run("source", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert "evil" not in [entry["name"] for entry in json.loads(listed.stdout)]
    # The console script with the project put on the path by hand: found, and skipped.
    script = os.path.join(os.path.dirname(sys.executable), "agentmonitors")
    done = subprocess.run(
        [script, "source", "list", "--format", "json"],
        cwd=hostile.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": "."},
    )
    assert done.returncode == 0, done.stderr
    assert "evil" not in [entry["name"] for entry in json.loads(done.stdout)]
    assert 'Source plugin "evil" (evil_source:Source) skipped' in done.stderr
    assert "inside the project folder" in done.stderr
    validated = hostile.run("validate")
    assert "evil" in validated.stdout + validated.stderr
    assert hostile.marks() == []

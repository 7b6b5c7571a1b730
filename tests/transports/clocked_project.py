"""A real daemon with a test-set clock over an enabled project with a high-urgency monitor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon

Run = Callable[..., CliResult]


NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: high
---
Read the changed note.
"""


def agentmonitors_in(folder: Path, *args: str) -> tuple[int, str, str]:
    """The installed command run in ``folder``, as an agent in the project runs it:
    (exit code, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=folder,
    )
    return done.returncode, done.stdout, done.stderr


class Project:
    def __init__(self, root: Path, daemon: ClockedDaemon) -> None:
        self.root = root
        self.ws = str(root)
        self.daemon = daemon

    def payload(self, event: str, host: str, **extra: Any) -> dict[str, Any]:
        return {"session_id": host, "hook_event_name": event, "cwd": self.ws, **extra}

    def hook(self, command: list[str], payload: Any) -> tuple[int, str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "agentmonitors", *command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
            check=False,
            cwd=self.root,
        )
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    def start_session(self, host: str) -> str:
        code, _out, err = self.hook(["session", "start"], self.payload("SessionStart", host))
        assert code == 0, err
        return self.session_id(host)

    def prompt(self, host: str, text: str, *extra: str) -> tuple[str, str]:
        code, out, err = self.hook(
            ["hook", "deliver", *extra], self.payload("UserPromptSubmit", host, prompt=text)
        )
        assert code == 0, err
        return out, err

    def ipc(self, method: str, params: dict[str, Any]) -> Any:
        return call(self.daemon.socket, method, params)

    def session_id(self, host: str) -> str:
        sessions = self.ipc("session.list", {})
        return str(next(item["id"] for item in sessions if item["hostSessionId"] == host))

    def states(self, host: str) -> dict[str, str]:
        rows = self.ipc("events.list", {"sessionId": self.session_id(host)})
        return {row["id"]: row["deliveryState"] for row in rows}

    def settled_change(self, text: str = "changed\n") -> str:
        """Change the note and move the clock until the high event is stored and settled."""
        before = set(self.states_any())
        # Written whole (a rename), as editors save: a file-change hint that lands
        # between a plain write's truncate and its write would see an empty note and
        # make a second event, which is right for the daemon but not what this waits for.
        scratch = self.root / "notes" / ".a.txt.partial"
        scratch.write_text(text)
        os.replace(scratch, self.root / "notes" / "a.txt")
        new: list[str] = []
        for _ in range(6):
            self.daemon.advance(31)
            self.daemon.tick()
            new = [event for event in self.states_any() if event not in before]
            if new:
                break
        assert len(new) == 1, new
        self.daemon.advance(16)  # past the 15 s delivery settle
        self.daemon.tick()
        return new[0]

    def states_any(self) -> list[str]:
        rows = self.daemon.query("SELECT id FROM monitor_events ORDER BY id")
        return [row[0] for row in rows]


@pytest.fixture
def clocked_project(isolated_environment: Path, run_cli: Run, tmp_path: Path) -> Iterator[Project]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    daemon = ClockedDaemon(root, tmp_path / "clock")
    daemon.start()
    yield Project(root, daemon)
    if daemon.process is not None:
        daemon.stop()

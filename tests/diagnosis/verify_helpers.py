"""A project with one scaffolded monitor, and ``verify`` run on it as a real process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any


def agentmonitors(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def scaffold(work: Path, monitor_id: str, source: str, edits: dict[str, str]) -> Path:
    """``init --type <source> <id>``, then each regex in ``edits`` replaced in the file."""
    done = agentmonitors(work, "init", "--type", source, monitor_id)
    assert done.returncode == 0, done.stderr
    path = work / ".claude" / "monitors" / monitor_id / "MONITOR.md"
    text = path.read_text(encoding="utf-8")
    for pattern, replacement in edits.items():
        text, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        assert count, f"{pattern!r} not in the scaffold"
    path.write_text(text, encoding="utf-8")
    return path


def approve(work: Path, monitor_id: str) -> None:
    done = agentmonitors(work, "monitor", "approve", "--yes", monitor_id)
    assert done.returncode == 0, done.stdout + done.stderr


class Verified:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code = done.returncode
        self.err = done.stderr
        self.out = done.stdout
        self.report: dict[str, Any] = json.loads(done.stdout)

    def stage(self, name: str) -> dict[str, str]:
        return next(item for item in self.report["stages"] if item["name"] == name)

    @property
    def daemon_pid(self) -> int | None:
        found = re.search(r"pid (\d+)", self.stage("daemon")["detail"])
        return int(found.group(1)) if found else None


def verify(work: Path, *args: str, timeout: float = 120) -> Verified:
    return Verified(agentmonitors(work, "verify", "--format", "json", *args, timeout=timeout))


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def workspace_files(work: Path) -> set[str]:
    return {
        str(path.relative_to(work))
        for path in work.rglob("*")
        if ".git" not in path.relative_to(work).parts
    }

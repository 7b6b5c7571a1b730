"""Shared fixtures: every test runs with its own HOME, data dir and working folder."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main

AGENT_VARIABLES = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CURSOR_AGENT",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "OPENCODE",
    "OPENCODE_SERVER",
    "AIDER_MODEL",
    "CLAUDE_PROJECT_DIR",
    "AGENTMONITORS_DB",
    "AGENTMONITORS_SOCKET",
)


def stray_project_above(folder: Path) -> Path | None:
    """An enabled project or monitors folder in an ancestor of ``folder``.

    Every test project sits in a temporary folder; one of these above it (left by a
    run that took the temporary root for its project) would make each test project
    without markers of its own resolve to that ancestor instead.
    """
    for ancestor in folder.parents:
        claude = ancestor / ".claude"
        if (claude / "agentmonitors.local.md").exists() or (claude / "monitors").is_dir():
            return claude
    return None


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    stray = stray_project_above(tmp_path)
    if stray is not None:
        pytest.fail(f"{stray} makes every test folder below it part of one project: remove it")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in AGENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # The installation under test is on PATH, as an installed one is for its user (the
    # hooks and `doctor` look for `agentmonitors` there); a test wanting otherwise sets it.
    installed = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", os.pathsep.join([installed, os.environ.get("PATH", os.defpath)]))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    return work


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run the real CLI entry point in-process and capture both streams."""

    def invoke(*args: str) -> CliResult:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke

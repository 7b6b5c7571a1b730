"""The checks in ``sources/permit.py`` where the action happens, called as a source calls them.

Whatever built the definition, a command that nobody approved does not start and an
outside folder is not walked: the refusal comes from the spawn and the walk themselves.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentmonitors.sources.command_poll import CommandPollSource
from agentmonitors.sources.command_poll.command_exec import run_command
from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.observation import ObservationContext
from agentmonitors.sources.permit import NotApproved, Permit

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def test_the_spawn_itself_refuses_a_command_nobody_approved(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = ["sh", "-c", f"touch {marker}"]
    with pytest.raises(NotApproved, match="monitor approve m"):
        asyncio.run(
            run_command(argv, cwd=None, env=None, timeout_ms=5000, permit=Permit(monitor_id="m"))
        )
    # A source handed no permit gets the workspace only: the command never starts.
    context = ObservationContext(None, 0, str(tmp_path), "m")
    with pytest.raises(NotApproved):
        asyncio.run(CommandPollSource().observe({"command": argv}, context))
    assert not marker.exists()
    # Approval of one command is no approval of another.
    other = Permit(monitor_id="m", commands=((("echo", "hi"), str(tmp_path)),))
    with pytest.raises(NotApproved):
        asyncio.run(run_command(argv, cwd=str(tmp_path), env=None, timeout_ms=5000, permit=other))
    assert not marker.exists()


def test_the_file_walk_itself_refuses_an_outside_folder(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    outside = tmp_path / "secrets"
    outside.mkdir()
    (outside / "key").write_text(PRIVATE_KEY)
    context = ObservationContext(None, 0, str(workspace), "w")
    for globs in (f"{outside}/*", "../secrets/*", "sub/*/../../../secrets/*"):
        with pytest.raises(NotApproved, match="outside the workspace"):
            asyncio.run(FileFingerprintSource().observe({"globs": globs}, context))

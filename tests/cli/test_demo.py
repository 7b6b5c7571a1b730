"""The README's first command: the demo must prove a change reaches a session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_passes_and_leaves_nothing_behind(isolated_environment: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(isolated_environment.parent / "home"),
            "TMPDIR": str(tmp_path),
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Demo passed: the change reached the session, and was delivered once." in done.stdout
    assert '"hookEventName":"UserPromptSubmit"' in done.stdout
    assert "AgentMon: Monitored changes are pending." in done.stdout
    assert "### notes (normal)" in done.stdout
    assert "a second prompt gets nothing" in done.stdout
    leftovers = [
        path.name for path in tmp_path.iterdir() if path.name.startswith("agentmonitors-demo-")
    ]
    assert leftovers == []
    # Nothing was written into the user's own data folder.
    assert not (
        isolated_environment.parent / "home" / ".local" / "share" / "agentmonitors"
    ).exists()

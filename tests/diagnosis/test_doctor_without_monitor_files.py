"""``doctor`` on a project with no monitors folder: information, not a failure.

A project whose only watches are agent-declared (``watch declare``) runs without a
``.claude/monitors`` folder, and a new project has nothing yet: neither is broken, so
doctor passes and says how to add a monitor file. A folder named with ``--dir`` that is
not there is still a failure. Driven through the installed CLI and a real daemon.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.security.hostile import agentmonitors

pytestmark = pytest.mark.slow


def doctor(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = agentmonitors(root, "doctor", "--format", "json", *args)
    return done.returncode, json.loads(done.stdout), done.stderr


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in report["checks"] if item["name"] == name)


def test_a_project_with_only_declared_watches_passes_doctor(isolated_environment: Path) -> None:
    root = isolated_environment
    assert agentmonitors(root, "init", "--enable-only").returncode == 0
    assert not (root / ".claude" / "monitors").exists()
    (root / "status.txt").write_text("pending\n")
    started = agentmonitors(root, "daemon", "start")
    assert started.returncode == 0, started.stderr
    try:
        payload = json.dumps(
            {"session_id": "host-w", "hook_event_name": "SessionStart", "cwd": str(root)}
        )
        hooked = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "agentmonitors"),
             "session", "start"],
            input=payload, capture_output=True, text=True, cwd=root, timeout=60, check=False,
        )  # fmt: skip
        assert hooked.returncode == 0, hooked.stderr
        sessions = json.loads(agentmonitors(root, "session", "list", "--format", "json").stdout)
        session = sessions[0]["id"]
        declared = agentmonitors(
            root, "watch", "declare", "file-fingerprint", "--session", session,
            "--scope", "globs=status.txt",
        )  # fmt: skip
        assert declared.returncode == 0, declared.stderr

        code, report, err = doctor(root)
        assert code == 0, (err, [c for c in report["checks"] if c["status"] == "fail"])
        folder = check(report, "monitors-directory")
        assert folder["status"] == "skip", folder
        assert "1 agent-declared watch(es)" in folder["detail"]
        assert "agentmonitors init <name>" in folder["detail"]
        assert "1 agent-declared watch(es)" in check(report, "monitors-valid")["detail"]
        text = agentmonitors(root, "doctor", "--format", "text")
        assert text.returncode == 0 and "✗" not in text.stdout, text.stdout
    finally:
        agentmonitors(root, "daemon", "stop")


def test_a_new_project_without_monitors_is_idle_with_how_to_add_one(
    isolated_environment: Path,
) -> None:
    root = isolated_environment
    assert agentmonitors(root, "init", "--enable-only").returncode == 0
    code, report, err = doctor(root)
    assert (code, err) == (0, "")
    folder = check(report, "monitors-directory")
    assert folder["status"] == "idle", folder
    assert "nothing is watched until a monitor is added" in folder["detail"]
    assert folder["remediation"].startswith("agentmonitors init <name>")
    text = agentmonitors(root, "doctor", "--format", "text")
    assert text.returncode == 0
    assert "  ↳ agentmonitors init <name> --type file-fingerprint" in text.stdout

    # A folder the user names that is not there is still a failure.
    missing = root / "elsewhere"
    code, report, err = doctor(root, "--dir", str(missing))
    assert code == 1 and "monitors-directory" in err
    assert check(report, "monitors-directory")["status"] == "fail"

"""A valid monitor that has never run, with no daemon: not a failure, and said as it is.

``monitor explain`` shows its true stages (valid, approved or needing nothing, first run
when a daemon starts, nothing for any session yet) and exits 0; ``doctor`` and
``inspect`` say the same; ``monitor history`` is empty. Driven through the installed CLI
in a fresh project, as a user who has just added a monitor would.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.security.hostile import agentmonitors


def project(root: Path) -> None:
    assert agentmonitors(root, "init", "--enable-only").returncode == 0
    made = agentmonitors(root, "init", "notes", "--glob", "notes/*.md")
    assert made.returncode == 0, made.stderr
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("first\n")


def test_explain_before_a_first_observation_shows_true_stages_and_exits_0(
    isolated_environment: Path,
) -> None:
    root = isolated_environment
    project(root)

    text = agentmonitors(root, "monitor", "explain", "notes", "--format", "text")
    assert text.returncode == 0, (text.stdout, text.stderr)
    assert "error:" not in text.stderr
    assert text.stderr.startswith("No daemon running, and nothing is stored for this monitor yet")
    lines = text.stdout.splitlines()
    assert lines[1] == (
        "✓ Definition: Monitor definition is valid; it needs no approval (it reads only the"
        " project)."
    )
    # Never "due now" with nobody to run it: it runs when a daemon does, and how to start one.
    assert lines[2].startswith("✓ Scheduling: Not observed yet; due as soon as a daemon runs")
    assert "agentmonitors daemon start" in lines[2] and "agentmonitors daemon once" in lines[2]
    assert "Nothing to deliver yet" in text.stdout
    assert lines[-1].startswith("Verdict: pending at Observation - Not observed yet")

    report = json.loads(
        agentmonitors(root, "monitor", "explain", "notes", "--format", "json").stdout
    )
    scheduling = report["stages"][1]
    assert scheduling["details"]["waitsForDaemon"] is True
    assert scheduling["details"]["nextDueAt"] is None
    assert report["verdict"]["status"] == "pending"
    assert report["observations"] == [] and report["events"] == []

    # doctor says the same and passes; inspect has no session to show; history is empty.
    doctor = agentmonitors(root, "doctor", "--format", "text")
    assert doctor.returncode == 0, (doctor.stdout, doctor.stderr)
    assert "next due: when the daemon runs (every 30s)" in doctor.stdout
    inspect = agentmonitors(root, "inspect", "--format", "text")
    assert (inspect.returncode, inspect.stdout) == (0, "No active session in this workspace.\n")
    history = agentmonitors(root, "monitor", "history", "notes", "--format", "text")
    assert (history.returncode, history.stdout) == (0, "No observation history.\n")

    # Once observed, the same commands read what was stored.
    assert agentmonitors(root, "daemon", "once").returncode == 0
    after = agentmonitors(root, "monitor", "explain", "notes", "--format", "text")
    assert after.returncode == 0 and "Last observed at" in after.stdout


def test_explain_names_an_approved_command_and_an_unenabled_project(
    isolated_environment: Path,
) -> None:
    root = isolated_environment
    made = agentmonitors(
        root,
        "init",
        "echo",
        "--type",
        "command-poll",
        "--command",
        "echo",
        "--command",
        "hi",
        "--yes",
    )
    assert made.returncode == 0, made.stderr
    text = agentmonitors(root, "monitor", "explain", "echo", "--format", "text")
    assert text.returncode == 0, (text.stdout, text.stderr)
    definition, scheduling = text.stdout.splitlines()[1:3]
    assert "the user approved what it does" in definition
    # No daemon starts for a project that is not enabled: the hint says to enable it first.
    assert "enable the project with `agentmonitors init --enable-only`" in scheduling

"""``hook deliver --debug`` names the pacing holds too (a debounce before any event
exists), and ``monitor explain`` and ``doctor`` cover the watches agents declare.

A real daemon with a test-set clock; the CLI and the hooks run as real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow

PREFIX = "agentmonitors hook deliver --debug: "


def cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "agentmonitors"), *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PWD": str(project.root)},
    )


def test_debug_names_a_debounce_that_holds_a_change_before_it_is_an_event(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-debounce")
    project.daemon.advance(31)
    project.daemon.tick()  # the baseline
    (project.root / "notes" / "a.txt").write_text("changed\n")
    project.daemon.advance(31)
    project.daemon.tick()  # seen, and held by the high band's 15 s debounce
    assert project.states_any() == []

    out, err = project.prompt("host-debounce", "go on", "--debug")

    assert out == ""
    lines = [line[len(PREFIX) :] for line in err.splitlines() if line.startswith(PREFIX)]
    debounce = 'held (pacing, debounce): monitor "notes":'
    pacing = [line for line in lines if line.startswith(debounce)]
    assert pacing, "\n".join(lines)
    assert "Debounce is holding 1 observation until " in pacing[0]
    # Without --debug the hook prints the same nothing.
    quiet, _ = project.prompt("host-debounce", "go on")
    assert quiet == ""


def test_explain_and_doctor_cover_a_declared_watch(clocked_project: Project) -> None:
    project = clocked_project
    session = project.start_session("host-watch")
    (project.root / "status.txt").write_text("pending\n")
    declared = cli(
        project, "watch", "declare", "file-fingerprint", "--session", session,
        "--scope", "globs=status.txt", "--format", "json",
    )  # fmt: skip
    assert declared.returncode == 0, declared.stderr
    watch_id = json.loads(declared.stdout)["id"]
    project.daemon.advance(31)
    project.daemon.tick()

    explained = cli(project, "monitor", "explain", watch_id, "--format", "json")
    assert explained.returncode == 0, explained.stderr
    report = json.loads(explained.stdout)
    definition = report["stages"][0]
    assert definition["status"] == "ok", definition
    assert definition["reason"].startswith("Watch declaration is valid")
    assert report["verdict"]["status"] != "failure", report["verdict"]

    doctor = cli(project, "doctor", "--format", "json")
    rows = {row["id"]: row for row in json.loads(doctor.stdout)["monitors"]}
    assert watch_id in rows, sorted(rows)
    assert rows[watch_id]["declaredBySession"] == session
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert checks[f"monitor:{watch_id}"]["status"] == "pass", checks[f"monitor:{watch_id}"]

    # A watch that ended is named as one, with how to list those still active.
    cancelled = cli(project, "watch", "cancel", watch_id, "--session", session)
    assert cancelled.returncode == 0, cancelled.stderr
    gone = json.loads(cli(project, "monitor", "explain", watch_id, "--format", "json").stdout)
    assert gone["stages"][0]["reason"].startswith(f'No active watch "{watch_id}"')
    assert f"agentmonitors watch list --session {session}" in gone["stages"][0]["reason"]

"""A watched file named as a user names it: relative to the project or to where they stand.

file-fingerprint stores each file under its absolute path; ``snapshot``, ``diff``,
``summary`` and ``events list --scope filePath=...`` find it from the relative path too,
with the daemon running and from the stored state, and an unknown key names the keys
that exist. Driven through the real CLI in a subprocess, in the folder the user is in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.transports.clocked_project import Project, agentmonitors_in

pytestmark = pytest.mark.slow


def run(cwd: Path, *args: str) -> tuple[int, str, str]:
    return agentmonitors_in(cwd, *args)


def answer(cwd: Path, *args: str) -> Any:
    code, out, err = run(cwd, *args, "--format", "json")
    assert code == 0, (args, out, err)
    return json.loads(out)


def listed_ids(cwd: Path, session: str, file_path: str) -> list[str]:
    records = answer(
        cwd, "events", "list", "--session", session, "--scope", f"filePath={file_path}"
    )
    return [record["id"] for record in records]


def check_relative_keys(project: Project, session: str, event: str) -> None:
    root, notes = project.root, project.root / "notes"
    stored = str(root / "notes" / "a.txt")
    for cwd, key in ((root, "notes/a.txt"), (root, "./notes/../notes/a.txt"), (notes, "a.txt")):
        shot = answer(cwd, "snapshot", "notes", "--object", key)
        assert (shot["objectKey"], shot["eventId"], shot["content"]) == (stored, event, "second\n")
        diff = answer(cwd, "diff", "notes", "--object", key)
        assert (diff["objectKey"], diff["changed"]) == (stored, True), diff
        assert "+ 1: second" in diff["diff"]
        summary = answer(cwd, "summary", "notes", "--object", key)
        assert [item["objectKey"] for item in summary["objects"]] == [stored]
        assert listed_ids(cwd, session, key) == [event]
    # A file of the project named from a subfolder is read relative to the project too.
    assert answer(notes, "snapshot", "notes", "--object", "notes/a.txt")["objectKey"] == stored

    # An unknown key says which keys exist, whichever verb was asked.
    for verb in ("snapshot", "diff", "summary"):
        code, out, err = run(root, verb, "notes", "--object", "notes/b.txt")
        assert code == 1 and out == "", (verb, out, err)
        assert '"notes/b.txt"' in err and stored in err, (verb, err)


def test_a_relative_object_key_finds_the_file_stored_under_its_absolute_path(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-relative")
    event = project.settled_change("second\n")

    check_relative_keys(project, session, event)
    project.daemon.stop()
    check_relative_keys(project, session, event)


def test_a_diff_of_an_unchanged_file_says_it_has_only_its_baseline(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.daemon.advance(31)
    project.daemon.tick()
    code, out, err = run(project.root, "diff", "notes", "--object", "notes/a.txt")
    assert code == 1 and out == "", (out, err)
    assert "has not changed since notes first saw it" in err, err
    assert "(event )" not in err

"""A line appended to a file is one added line, in ``diff`` and in what the agent is told.

A final newline ends the last line; it does not start an empty one, so appending a line
to a file that ends with a newline never shows an empty line removed and re-added.
Driven through the real CLI and the real ``hook deliver`` against a clocked daemon.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow


def test_an_appended_line_is_one_added_line(clocked_project: Project) -> None:
    project = clocked_project
    project.start_session("host-append")
    project.settled_change("first\nsecond\n")
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "diff", "notes", "--object", "notes/a.txt",
         "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False, cwd=project.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["diff"] == "+ 2: second"
    out, _err = project.prompt("host-append", "what changed?")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "+ 2: second" in context
    assert "- 2: " not in context and "+ 3: " not in context

"""``verify <id>`` runs the monitor it names and no other of the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosis.verify_helpers import agentmonitors, approve, verify
from tests.security.hostile import add_monitor

pytestmark = pytest.mark.slow

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
  interval: 1s
---
Read the changed note.
"""

SIDE_EFFECT = """---
watch:
  type: command-poll
  command: ["sh", "-c", "echo ran >> {marker}"]
  interval: 1s
---
Leaves a marker each time it runs.
"""


def test_verify_runs_only_the_named_monitor(isolated_environment: Path) -> None:
    work = isolated_environment
    assert agentmonitors(work, "init", "--enable-only").returncode == 0
    (work / "notes").mkdir()
    (work / "notes" / "a.txt").write_text("first\n")
    add_monitor(work, "notes", NOTES)
    marker = work / "side-effect.marker"
    add_monitor(work, "side-effect", SIDE_EFFECT.format(marker=marker))
    approve(work, "side-effect")

    result = verify(work, "notes")

    assert result.code == 0, result.out + result.err
    assert result.report["ok"] is True
    # The other monitor's command never ran: no marker, no side effect.
    assert not marker.exists()

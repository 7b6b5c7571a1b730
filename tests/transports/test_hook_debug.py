"""``hook deliver --debug`` names why settled events were held back."""

from __future__ import annotations

import json

import pytest

from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow


def test_more_settled_events_than_fit_are_reported_deferred_by_cap(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-cap")
    for index in range(60):
        (project.root / "notes" / f"note-{index:02d}.txt").write_text(f"note {index}\n")
    stored: list[str] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        stored = project.states_any()
        if len(stored) >= 60:
            break
    assert len(stored) == 60
    project.daemon.advance(16)

    quiet, _ = project.prompt("host-cap", "go on")
    project_states = project.states("host-cap")
    shown = [event for event, state in project_states.items() if state == "claimed"]
    assert 0 < len(shown) < 60
    assert len(json.loads(quiet)["hookSpecificOutput"]["additionalContext"]) <= 4000

    out, err = project.prompt("host-cap", "and then?", "--debug")
    assert "hold high: deferred-by-cap" in err
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"]

"""``init --type pr-review|my-prs``: the presets are written as shipped and validate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.catalog.presets import PRESETS
from tests.conftest import CliResult

Run = Callable[..., CliResult]

CURATED = {"pr-review": "PRs awaiting my review", "my-prs": "My PRs that need me"}


@pytest.mark.parametrize("preset", ["pr-review", "my-prs"])
def test_init_a_preset_then_validate_passes(run_cli: Run, preset: str) -> None:
    created = run_cli("init", "x", "--yes", "--type", preset)
    assert created.code == 0, created.err
    assert "Created monitor: .claude/monitors/x/MONITOR.md" in created.out
    assert "gh auth login" in created.out  # what it needs, instead of "edit it"
    assert "Edit it to say" not in created.out
    assert "Approved as created" in created.out
    assert max(len(line) for line in created.out.splitlines()) < 300
    text = Path(".claude/monitors/x/MONITOR.md").read_text()
    assert text == PRESETS[preset].template()  # written exactly as shipped
    result = run_cli("validate", "--format", "json")
    assert result.code == 0, result.out
    report = result.json()
    assert (report["valid"], report["invalid"], report["warnings"]) == (1, 0, [])
    (monitor,) = report["monitors"]
    assert (monitor["source"], monitor["name"]) == ("command-poll", CURATED[preset])
    assert report["awaitingApproval"] == []  # init approved what the user created


def test_name_and_urgency_seeds_replace_the_presets_own(run_cli: Run) -> None:
    created = run_cli(
        "init", "mine", "--yes", "--type", "my-prs", "--name", "Mine: 'all'", "--urgency", "low"
    )
    assert created.code == 0, created.err
    text = Path(".claude/monitors/mine/MONITOR.md").read_text()
    assert "name: 'Mine: ''all'''\n" in text
    assert "\nurgency: low\n" in text
    assert "urgency: high" not in text
    report = run_cli("validate", "--format", "json").json()
    assert report["valid"] == 1
    assert report["monitors"][0]["name"] == "Mine: 'all'"


@pytest.mark.parametrize(
    ("flag", "value"), [("--command", "gh"), ("--glob", "*.md")], ids=["command", "glob"]
)
def test_a_presets_watch_block_cannot_be_seeded(run_cli: Run, flag: str, value: str) -> None:
    result = run_cli("init", "x", "--yes", "--type", "pr-review", flag, value)
    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith(f"error: {flag} is not supported for --type pr-review (")
    assert "a preset writes its own watch block" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not Path(".claude/monitors").exists()


def test_the_bootstrap_scaffolds_a_preset_and_validates_it(run_cli: Run) -> None:
    result = run_cli("init", "--yes", "--type", "pr-review")
    assert result.code == 0, result.err
    assert "my-monitor: valid" in result.out
    text = Path(".claude/monitors/my-monitor/MONITOR.md").read_text()
    assert "name: 'PRs awaiting my review'" in text


def test_an_unknown_type_lists_the_presets_too(run_cli: Run) -> None:
    result = run_cli("init", "x", "--yes", "--type", "pr-reviews")
    assert result.code == 1
    assert result.err.strip().endswith("; or a preset: pr-review, my-prs")
    assert len(result.err.strip().splitlines()) == 1
    assert not Path(".claude/monitors").exists()


def test_help_names_the_presets(run_cli: Run) -> None:
    result = run_cli("init", "--help")
    assert result.code == 0
    assert "pr-review, my-prs" in " ".join(result.out.split())

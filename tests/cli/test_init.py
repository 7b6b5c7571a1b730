from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.catalog.scaffold import SOURCE_TYPES
from tests.conftest import CliResult

Run = Callable[..., CliResult]


@pytest.mark.parametrize("source_type", SOURCE_TYPES)
def test_init_then_validate_passes_for_every_type(run_cli: Run, source_type: str) -> None:
    created = run_cli("init", "watcher", "--yes", "--type", source_type)
    assert created.code == 0, created.err
    assert "Created monitor: .claude/monitors/watcher/MONITOR.md" in created.out
    text = Path(".claude/monitors/watcher/MONITOR.md").read_text()
    assert f"type: {source_type}" in text
    assert "\n  #" in text  # the template explains its config
    assert "name: 'Watcher'" in text
    result = run_cli("validate", "--format", "json")
    assert result.code == 0, result.out
    report = result.json()
    assert report["valid"] == 1 and report["invalid"] == 0
    assert report["monitors"][0]["source"] == source_type


def test_init_refuses_to_overwrite(run_cli: Run) -> None:
    assert run_cli("init", "a", "--yes").code == 0
    path = Path(".claude/monitors/a/MONITOR.md")
    path.write_text("mine")
    again = run_cli("init", "a", "--yes", "--type", "schedule")
    assert again.code == 1
    assert "Monitor already exists: .claude/monitors/a/MONITOR.md" in again.err
    assert path.read_text() == "mine"


def test_init_seeds_are_quoted_and_valid(run_cli: Run) -> None:
    result = run_cli(
        "init",
        "docs-watch",
        "--glob",
        "docs/**/*.md",
        "--glob",
        "it's/*.txt",
        "--name",
        "Docs: 'the' watch",
        "--urgency",
        "high",
    )
    assert result.code == 0
    text = Path(".claude/monitors/docs-watch/MONITOR.md").read_text()
    assert "    - 'docs/**/*.md'\n    - 'it''s/*.txt'" in text
    assert "name: 'Docs: ''the'' watch'" in text
    assert "urgency: high" in text
    report = run_cli("validate", "--format", "json").json()
    assert report["monitors"][0]["name"] == "Docs: 'the' watch"


def test_init_command_seed_keeps_argv_tokens(run_cli: Run) -> None:
    result = run_cli(
        "init",
        "status",
        "--type",
        "command-poll",
        "--command",
        "git",
        "--command",
        "status --short",
    )
    assert result.code == 0
    text = Path(".claude/monitors/status/MONITOR.md").read_text()
    assert "    - 'git'\n    - 'status --short'\n" in text
    report = run_cli("validate", "--format", "json").json()
    assert report["valid"] == 1 and report["warnings"] == []


def test_untouched_command_poll_scaffold_warns_without_failing(run_cli: Run) -> None:
    run_cli("init", "upstream", "--yes", "--type", "command-poll")
    result = run_cli("validate", "--format", "json")
    assert result.code == 0
    report = result.json()
    assert report["valid"] == 1
    assert [w["id"] for w in report["warnings"]] == ["upstream"]
    assert "watch.command" in report["warnings"][0]["warning"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("x", "--type", "schedule", "--glob", "a"), "--glob is not supported for --type schedule"),
        (("x", "--command", "ls"), "--command is not supported for --type file-fingerprint"),
        (("../escape",), "Invalid monitor name"),
        ((".hidden",), "Invalid monitor name"),
    ],
)
def test_init_rejects_bad_seeds_and_writes_nothing(
    run_cli: Run, args: tuple[str, ...], message: str
) -> None:
    result = run_cli("init", *args)
    assert result.code == 1
    assert message in result.err
    assert not Path(".claude/monitors").exists()


def test_init_unknown_type_is_a_usage_error(run_cli: Run) -> None:
    result = run_cli("init", "x", "--yes", "--type", "carrier-pigeon")
    assert result.code == 1
    assert result.err.startswith("error: ")
    assert len(result.err.strip().splitlines()) == 1


def test_init_from_a_subfolder_uses_the_project_root(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch, isolated_environment: Path
) -> None:
    (isolated_environment / ".git").mkdir()
    (isolated_environment / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    sub = isolated_environment / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    monkeypatch.setenv("PWD", str(sub))
    assert run_cli("init", "rooted", "--yes").code == 0
    assert (isolated_environment / ".claude/monitors/rooted/MONITOR.md").is_file()


def test_enable_only_is_idempotent(run_cli: Run) -> None:
    Path(".gitignore").write_text("node_modules")  # no trailing newline
    first = run_cli("init", "--enable-only")
    assert first.code == 0
    assert "Enabled monitoring" in first.out
    gitignore = Path(".gitignore").read_text()
    assert gitignore == "node_modules\n.claude/*.local.*\n/.agentmonitors/\n"
    enable = Path(".claude/agentmonitors.local.md").read_text()
    assert enable.startswith("---\nenabled: true\n---\n")
    second = run_cli("init", "--enable-only")
    assert second.code == 0
    assert "nothing to change" in second.out
    assert Path(".gitignore").read_text() == gitignore
    assert Path(".claude/agentmonitors.local.md").read_text() == enable
    assert not Path(".claude/monitors").exists()


def test_gitignore_keeps_crlf_and_adds_only_missing_lines(run_cli: Run) -> None:
    Path(".gitignore").write_bytes(b"dist\r\n.claude/*.local.*\r\n")
    run_cli("init", "--enable-only")
    assert Path(".gitignore").read_bytes() == b"dist\r\n.claude/*.local.*\r\n/.agentmonitors/\r\n"


def test_bootstrap_yes_scaffolds_and_validates(run_cli: Run) -> None:
    result = run_cli("init", "--yes", "--type", "schedule")
    assert result.code == 0, result.err
    assert "my-monitor: valid" in result.out
    assert "type: schedule" in Path(".claude/monitors/my-monitor/MONITOR.md").read_text()


def test_bootstrap_without_tty_skips_scaffold(run_cli: Run) -> None:
    result = run_cli("init")
    assert result.code == 0
    assert "init --yes" in result.out
    assert not Path(".claude/monitors").exists()

"""``validate`` runs without click when its arguments are plain, and says the same.

Editors and pre-commit hooks run it on every save, where start-up is most of its cost:
a plain invocation imports neither click nor what only observing needs (asyncio, the
HTTP client, logging, the YAML parser and pydantic for an unchanged monitor), and
anything the quick parser does not fully understand is click's, with click's messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.cli.app import run as run_with_click
from tests.conftest import CliResult
from tests.test_imports import run_hook_command

Run = Callable[..., CliResult]

MONITORS = {
    "notes": 'watch:\n  type: file-fingerprint\n  globs: "notes/**/*.txt"\n',
    "status": "watch:\n  type: command-poll\n  command: [git, status]\n  interval: 5m\n",
    "remote": "watch:\n  type: api-poll\n  url: http://127.0.0.1:9/x\n  interval: 5m\n",
    "weekly": 'watch:\n  type: schedule\n  cron: "0 9 * * 1"\n',
    "broken": "watch:\n  type: command-poll\n  interval: 5m\n",
    "pulled": "watch:\n  type: incoming-changes\n  paths: [docs/]\n",
    "upstream": "watch:\n  type: incoming-changes\n  paths: [src/]\n  cwd: ../upstream\n",
}
# What a plain validate never needs: each is loaded by click or by observing only.
UNUSED = ("click", "asyncio", "logging", "httpx2", "pydantic", "yaml", "subprocess")
# Annotations alone name these on its path: each costs a start-up a millisecond or more.
HEAVY_STDLIB = ("typing", "datetime", "threading", "contextlib", "importlib")
# A source's observing code: each monitor's approval is read from its source's light modules.
OBSERVING = (
    "agentmonitors.sources.api_poll.source",
    "agentmonitors.sources.api_poll.http_fetch",
    "agentmonitors.sources.command_poll.source",
    "agentmonitors.sources.command_poll.outcome",
    "agentmonitors.sources.file_fingerprint",
    "agentmonitors.sources.schedule",
    "agentmonitors.sources.collections_diff",
    "agentmonitors.sources.incoming_changes.source",
    "agentmonitors.sources.incoming_changes.git_refs",
)


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    for name, frontmatter in MONITORS.items():
        folder = root / ".claude" / "monitors" / name
        folder.mkdir(parents=True)
        (folder / "MONITOR.md").write_text(f"---\n{frontmatter}---\nRead it.\n")
    return root


def click_run(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    capsys.readouterr()
    code = run_with_click(list(args))
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)


@pytest.mark.slow
def test_a_plain_validate_loads_nothing_it_does_not_use(workspace: Path) -> None:
    # The first run compiles each monitor (YAML, pydantic); the second reads them back.
    assert run_hook_command(["validate"], {}, workspace).code == 1
    checked = run_hook_command(["validate", "--format", "json"], {}, workspace)
    assert checked.code == 1, checked.err
    report = json.loads(checked.out)
    assert (report["valid"], report["invalid"]) == (6, 1)
    awaiting = {item["id"] for item in report["awaitingApproval"]}
    assert awaiting == {"status", "remote", "upstream"}
    loaded = {name.split(".")[0] for name in checked.modules} | checked.modules
    assert loaded.isdisjoint(UNUSED), sorted(loaded & set(UNUSED))
    assert checked.modules.isdisjoint(OBSERVING), sorted(checked.modules & set(OBSERVING))
    assert checked.modules.isdisjoint(HEAVY_STDLIB), sorted(checked.modules & set(HEAVY_STDLIB))


def test_the_quick_path_and_click_print_the_same(
    workspace: Path, run_cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (
        ["validate"],
        ["validate", "--format", "json"],
        ["validate", "--format=toon"],
        ["validate", ".claude/monitors/notes", "--format", "json"],
        ["validate", ".claude/monitors/notes/MONITOR.md"],
        ["validate", "missing-dir"],
        ["validate", "missing-dir", "--format", "json"],
    ):
        quick, slow = run_cli(*args), click_run(capsys, *args)
        assert (quick.code, quick.out, quick.err) == (slow.code, slow.out, slow.err), args
    assert run_cli("validate", ".claude/monitors/notes").code == 0


def test_what_the_quick_parser_cannot_read_is_click_s(workspace: Path, run_cli: Run) -> None:
    helped = run_cli("validate", "--help")
    assert helped.code == 0
    assert "--format" in helped.out
    bad = run_cli("validate", "--format", "yaml")
    assert bad.code == 2
    assert bad.err.startswith("error: Invalid value for '--format': 'yaml' is not one of")
    unknown = run_cli("validate", "--bogus")
    assert unknown.code == 2
    assert unknown.err.startswith("error: No such option '--bogus'")
    dangling = run_cli("validate", "--format")
    assert dangling.code == 2

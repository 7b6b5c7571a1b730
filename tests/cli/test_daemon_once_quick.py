"""``daemon once`` runs without click when its arguments are plain, and says the same.

A scheduler may run it every few seconds over a large tree; what the tick does not
use (click, asyncio when every due source observes in place, the delivery projection,
an event's materialization, glob libraries for plain patterns, python-ulid) is never
imported, and anything the quick parser does not fully understand is click's, with
click's own messages.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.cli.app import run as run_with_click
from agentmonitors.cli.tick_once import quick_parse
from tests.conftest import CliResult
from tests.test_imports import run_hook_command

Run = Callable[..., CliResult]

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/**/*.txt"
  interval: 256200s
---
Read the note.
"""
NOT_DUE = "Evaluated 0 monitor(s), emitted 0 event(s). (1 not yet due — next due in 2d 23h)\n"
# Loaded only when a tick stores an event, parses an unusual glob, observes a source
# that must be awaited, or click parses.
UNUSED = (
    "click",
    "asyncio",
    "concurrent",
    "agentmonitors.delivery.projection",
    "agentmonitors.runtime.materialize",
    "wcmatch",
    "bracex",
    "ulid",
)


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "notes" / "deep" / "a.txt").write_text("one\n")
    return root


def make_due(workspace: Path) -> None:
    """Mark the monitor observed long ago, as its interval passing would."""
    from agentmonitors.paths import resolve_db_path

    conn = sqlite3.connect(resolve_db_path(str(workspace)))
    try:
        with conn:
            conn.execute("UPDATE monitor_state SET last_observation_at = 0")
    finally:
        conn.close()


def click_run(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    capsys.readouterr()
    code = run_with_click(list(args))
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)


@pytest.mark.slow
def test_a_plain_tick_loads_nothing_it_does_not_use(workspace: Path) -> None:
    baseline = run_hook_command(["daemon", "once", "--format", "json"], {}, workspace)
    assert baseline.code == 0, baseline.err
    assert json.loads(baseline.out)["evaluatedMonitors"] == ["notes"]
    loaded = {name.split(".")[0] for name in baseline.modules} | baseline.modules
    assert loaded.isdisjoint(UNUSED), loaded & set(UNUSED)

    again = run_hook_command(["daemon", "once"], {}, workspace)
    assert (again.code, again.out) == (0, NOT_DUE)
    assert "click" not in again.modules


@pytest.mark.slow
def test_a_tick_that_stores_an_event_still_projects_it(workspace: Path) -> None:
    """The projection, imported on the first event only, still runs for it."""
    assert run_hook_command(["daemon", "once"], {}, workspace).code == 0
    (workspace / "notes" / "deep" / "a.txt").write_text("two\n")
    make_due(workspace)
    changed = run_hook_command(
        ["daemon", "once", "--format=json", f"--workspace={workspace}"], {}, workspace
    )
    assert changed.code == 0, changed.err
    report = json.loads(changed.out)
    assert report["evaluatedMonitors"] == ["notes"]
    assert len(report["emittedEventIds"]) == 1
    assert "agentmonitors.delivery.projection" in changed.modules


def test_the_quick_path_and_click_print_the_same(
    workspace: Path, run_cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("daemon", "once").code == 0
    quick, slow = run_cli("daemon", "once"), click_run(capsys, "daemon", "once")
    assert (quick.code, quick.out, quick.err) == (slow.code, slow.out, slow.err) == (0, NOT_DUE, "")

    quick = run_cli("daemon", "once", "--format", "json")
    slow = click_run(capsys, "daemon", "once", "--format", "json")
    assert quick.code == slow.code == 0
    assert json.loads(quick.out) == json.loads(slow.out)

    missing = str(workspace / "missing")
    for extra in ([], ["--format", "json"]):
        quick = run_cli("daemon", "once", "--workspace", missing, *extra)
        slow = click_run(capsys, "daemon", "once", "--workspace", missing, *extra)
        assert (quick.code, quick.out, quick.err) == (slow.code, slow.out, slow.err)
        assert quick.code == 1


def test_what_the_quick_parser_cannot_read_is_click_s(workspace: Path, run_cli: Run) -> None:
    helped = run_cli("daemon", "once", "--help")
    assert helped.code == 0
    assert "--force" in helped.out
    bad = run_cli("daemon", "once", "--format", "yaml")
    assert bad.code == 2
    assert bad.err.startswith("error: Invalid value for '--format': 'yaml' is not one of")
    extra = run_cli("daemon", "once", "a", "b")
    assert extra.code == 2
    assert extra.err.startswith("error: Got unexpected extra argument (b)")


@pytest.mark.parametrize(
    ("args", "options"),
    [
        ([], (None, None, False, "text")),
        (["--force"], (None, None, True, "text")),
        (["--format", "json"], (None, None, False, "json")),
        (["--format=text", "--workspace=/w"], (None, "/w", False, "text")),
        (["--workspace", "/w", "monitors"], ("monitors", "/w", False, "text")),
        (["monitors", "--force"], ("monitors", None, True, "text")),
    ],
)
def test_plain_arguments_are_read_as_click_reads_them(
    args: list[str], options: tuple[str | None, str | None, bool, str]
) -> None:
    parsed = quick_parse(args)
    assert parsed is not None
    monitors_dir, workspace, force, output_format = options
    assert parsed == {
        "monitors_dir": monitors_dir,
        "workspace": workspace,
        "force": force,
        "output_format": output_format,
    }


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["--format", "yaml"],
        ["--format"],
        ["--workspace"],
        ["--workspace", "--force"],
        ["--force=yes"],
        ["--force", "--force"],
        ["a", "b"],
        ["--"],
        ["-"],
        ["--unknown"],
    ],
)
def test_anything_else_is_left_to_click(args: list[str]) -> None:
    assert quick_parse(args) is None

"""``agentmonitors monitor test <path>``: a dry run of one monitor file, as a user runs it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.cli.monitor_test import config_root_for
from tests.conftest import CliResult
from tests.fixtures.example_source.install import install_example, write_dist_info

Run = Callable[..., CliResult]

NOTES = """---
name: Notes
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the note.
"""

BASELINE_TEXT = """Testing monitor "Notes" (source: file-fingerprint)...

Baseline established. The "file-fingerprint" source requires a prior baseline before it can detect changes.
Running a second observation to demonstrate change detection...

No changes detected since baseline. This is expected — both observations happened within the same command invocation.

In production, the agent process keeps running between observations, so file changes are detected across polls.

This test command verifies that the source can read and fingerprint your files successfully.
"""  # noqa: E501


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("one\n")
    return root


def monitor_file(project: Path, name: str = "notes") -> str:
    return str(project / ".claude" / "monitors" / name / "MONITOR.md")


def write_monitor(project: Path, name: str, text: str) -> str:
    folder = project / ".claude" / "monitors" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(text)
    return str(folder / "MONITOR.md")


def data_files(isolated_environment: Path) -> list[str]:
    data = isolated_environment.parent / "home" / ".local" / "share"
    return [str(path) for path in data.rglob("*")] if data.exists() else []


# --------------------------------------------------------------------------- stateful flow


def test_a_stateful_source_baselines_then_observes_again(
    project: Path, run_cli: Run, isolated_environment: Path
) -> None:
    # Run from an unrelated directory: the globs resolve against the project.
    result = run_cli("monitor", "test", monitor_file(project))
    assert result.code == 0, result.err
    assert result.out == BASELINE_TEXT
    assert result.err == ""
    assert data_files(isolated_environment) == []  # a dry run stores nothing


def test_the_second_observation_uses_the_first_state(
    project: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []

    def change_the_file(seconds: float) -> None:
        slept.append(seconds)
        (project / "notes" / "a.txt").write_text("two, longer\n")

    monkeypatch.setattr(time, "sleep", change_the_file)
    result = run_cli("monitor", "test", monitor_file(project), "--format", "json")
    assert result.code == 0, result.err
    assert slept == [0.1]
    report = result.json()
    assert list(report) == ["monitor", "source", "baseline", "observations"]
    assert report["monitor"] == "Notes"
    assert report["source"] == "file-fingerprint"
    assert report["baseline"] is True
    (observation,) = report["observations"]
    assert set(observation) <= {"title", "snapshot"}
    assert "a.txt" in observation["title"]


def test_observations_in_text(project: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        time, "sleep", lambda _: (project / "notes" / "b.txt").write_text("new file\n")
    )
    result = run_cli("monitor", "test", monitor_file(project))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    at = lines.index("1 observation(s):")
    assert lines[at + 1] == ""
    assert lines[at + 2].startswith("  Title: ") and "b.txt" in lines[at + 2]
    assert lines[at + 3].startswith("  Snapshot: ")


def test_no_files_matched(project: Path, run_cli: Run) -> None:
    (project / "notes" / "a.txt").unlink()
    message = (
        "No files matched this monitor's globs (globs: notes/*.txt). Check watch.globs and"
        f" watch.cwd relative to workspace: {project}"
    )
    text = run_cli("monitor", "test", monitor_file(project))
    assert text.code == 1
    assert text.out == 'Testing monitor "Notes" (source: file-fingerprint)...\n'
    assert text.err == f"error: {message}\n"
    as_json = run_cli("monitor", "test", monitor_file(project), "--format", "json")
    assert as_json.code == 1
    assert as_json.json() == {
        "monitor": "Notes",
        "source": "file-fingerprint",
        "baseline": False,
        "outcome": "no-files-matched",
        "observations": [],
        "error": message,
    }


def test_globs_as_a_list_are_joined(project: Path, run_cli: Run) -> None:
    path = write_monitor(
        project,
        "many",
        "---\nwatch:\n  type: file-fingerprint\n  globs: [x/*.md, y/*.md]\n---\nx\n",
    )
    result = run_cli("monitor", "test", path)
    assert result.code == 1
    assert "(globs: x/*.md, y/*.md)" in result.err


# --------------------------------------------------------------------------- naming a monitor


def test_a_monitor_is_named_by_its_file_its_folder_or_its_id(
    project: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setenv("PWD", str(project))
    # The id "notes" is also the name of a project folder (the watched one): a folder
    # that holds no MONITOR.md is not taken for the monitor.
    assert (project / "notes").is_dir()
    for name in (monitor_file(project), ".claude/monitors/notes", "notes"):
        result = run_cli("monitor", "test", name)
        assert (result.code, result.out, result.err) == (0, BASELINE_TEXT, ""), name


def test_an_unknown_id_lists_the_known_ones(
    project: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setenv("PWD", str(project))
    result = run_cli("monitor", "test", "ghost")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        'error: Monitor "ghost" not found: no such file or folder, and no monitor has that id'
        " (known ids: notes).\n"
    )
    as_json = run_cli("monitor", "test", "ghost", "--format", "json")
    assert as_json.json()["error"].startswith('Monitor "ghost" not found')


# --------------------------------------------------------------------------- errors


def test_a_directory_points_at_validate(project: Path, run_cli: Run) -> None:
    folder = str(project / ".claude" / "monitors")
    result = run_cli("monitor", "test", folder)
    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith(f'error: "{folder}" is a directory, not a file.')
    assert f"agentmonitors validate '{folder}'" in result.err
    as_json = run_cli("monitor", "test", folder, "--format", "json")
    assert as_json.code == 1
    assert "is a directory" in as_json.json()["error"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("---\nwatch: [\n---\nx\n", "Parse error: "),
        ("---\nwatch:\n  type: nope\n---\nx\n", 'Unknown source: "nope". Available: '),
        (
            "---\nwatch:\n  type: file-fingerprint\n  globs: 42\n---\nx\n",
            "Invalid watch block: watch.globs",
        ),
    ],
    ids=["parse", "unknown-source", "scope"],
)
def test_definition_errors(project: Path, run_cli: Run, text: str, error: str) -> None:
    path = write_monitor(project, "bad", text)
    result = run_cli("monitor", "test", path)
    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith(f"error: {error}")
    as_json = run_cli("monitor", "test", path, "--format", "json")
    assert as_json.code == 1
    assert as_json.json()["error"].startswith(error)


def test_unknown_source_lists_every_source(project: Path, run_cli: Run) -> None:
    path = write_monitor(project, "bad", "---\nwatch:\n  type: nope\n---\nx\n")
    result = run_cli("monitor", "test", path, "--format", "json")
    assert result.json() == {
        "error": 'Unknown source: "nope". Available: file-fingerprint, api-poll, '
        "command-poll, schedule, incoming-changes"
    }


def test_missing_and_unreadable_files(project: Path, run_cli: Run) -> None:
    missing = str(project / "nope.md")
    result = run_cli("monitor", "test", missing)
    assert (result.code, result.err) == (1, f"error: Monitor file not found: {missing}\n")
    binary = project / ".claude" / "monitors" / "bin.md"
    binary.write_bytes(b"---\nwatch:\n  type: \xff\n---\n")
    unreadable = run_cli("monitor", "test", str(binary), "--format", "json")
    assert unreadable.code == 1
    assert unreadable.json()["error"].startswith("Cannot read monitor file: ")


# --------------------------------------------------------------------------- plugin sources


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = install_example(tmp_path / "site")
    (folder / "raising_source.py").write_text(
        "class Raising:\n"
        "    name = 'example-raising'\n"
        "    description = 'Always fails.'\n"
        "    stateful = False\n"
        "    scope_schema = {'type': 'object'}\n"
        "    async def observe(self, config, context):\n"
        "        raise OSError('upstream is down')\n"
    )
    write_dist_info(folder, "zz-raising", "1.0", {"raising": "raising_source:Raising"})
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [name for name in sys.modules if name.split(".")[0] in {"raising_source"}]:
        del sys.modules[name]
    for name in [name for name in sys.modules if name.startswith("agentmonitors_example")]:
        del sys.modules[name]


def test_a_stateless_plugin_source_reports_observations_and_warnings(
    site: Path, project: Path, run_cli: Run
) -> None:
    path = write_monitor(
        project,
        "echo",
        "---\nwatch:\n  type: example-echo\n  message: hi\n  warning: careful\n---\nx\n",
    )
    text = run_cli("monitor", "test", path)
    assert text.code == 0, text.err
    assert text.err == "Warning: careful\n"
    assert text.out == (
        'Testing monitor "echo" (source: example-echo)...\n'
        "1 observation(s):\n\n"
        "  Title: hi\n"
        '  Snapshot: {\n  "message": "hi"\n}\n\n'
    )
    as_json = run_cli("monitor", "test", path, "--format", "json")
    assert as_json.json() == {
        "monitor": "echo",
        "source": "example-echo",
        "baseline": False,
        "observations": [{"title": "hi", "snapshot": {"message": "hi"}}],
        "warnings": ["careful"],
    }


def test_observation_failed(site: Path, project: Path, run_cli: Run) -> None:
    path = write_monitor(project, "down", "---\nwatch:\n  type: example-raising\n---\nx\n")
    text = run_cli("monitor", "test", path)
    assert text.code == 1
    assert text.out == 'Testing monitor "down" (source: example-raising)...\n'
    assert text.err == "error: Observation failed: upstream is down\n"
    as_json = run_cli("monitor", "test", path, "--format", "json")
    assert (as_json.code, as_json.json()) == (
        1,
        {"error": "Observation failed: upstream is down"},
    )


# --------------------------------------------------------------------------- workspace


@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("/a/b/.claude/monitors/x/MONITOR.md", "/a/b"),
        ("/a/.codex/monitors/x.md", "/a"),
        ("/a/.claude/monitors/nested/.claude/monitors/y/MONITOR.md", "/a/.claude/monitors/nested"),
        ("/loose/monitors/x/MONITOR.md", "/loose/monitors/x"),
    ],
)
def test_the_workspace_is_the_parent_of_the_nearest_config_folder(path: str, root: str) -> None:
    assert config_root_for(path.replace("/", os.sep)) == root.replace("/", os.sep)


def test_a_relative_path_resolves_against_the_current_directory(
    project: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / ".claude")
    result = run_cli("monitor", "test", os.path.join("monitors", "notes", "MONITOR.md"))
    assert result.code == 0, result.err
    assert result.out == BASELINE_TEXT

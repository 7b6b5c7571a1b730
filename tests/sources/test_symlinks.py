"""file-fingerprint never follows a symlink out of the workspace unless its target is approved.

Real folders and real symlinks (file and folder links, chains, links inside an approved
target), observed through the source and through ``agentmonitors monitor test``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from tests.conftest import CliResult

SECRET = "ssh-private-key-material\n"
REASON = (
    "it leads outside the workspace; to read it, name the target in watch.globs (a project"
    " monitor then waits for `agentmonitors monitor approve`)"
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with one file inside, and an outside folder holding a secret."""
    workspace = tmp_path / "workspace"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "inside.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return workspace, outside


def observe(
    workspace: Path | str,
    globs: str | list[str],
    *,
    state: Any = None,
    approved: Iterable[Path] = (),
) -> ObservationResult:
    context = ObservationContext(
        previous_state=state,
        now_ms=1_700_000_000_000,
        workspace_path=str(workspace),
        monitor_id="files",
        approved_outside_paths=frozenset(str(path) for path in approved),
    )
    return asyncio.run(FileFingerprintSource().observe({"globs": globs}, context))


def fingerprints(result: ObservationResult) -> dict[str, str]:
    assert isinstance(result.next_state, dict)
    return dict(result.next_state["fingerprints"])


def test_a_file_link_out_of_the_workspace_is_skipped_and_named(
    layout: tuple[Path, Path],
) -> None:
    workspace, outside = layout
    notes = workspace / "notes"
    (notes / "key.txt").symlink_to(outside / "secret.txt")
    (notes / "alias.txt").symlink_to(notes / "inside.txt")

    result = observe(workspace, "notes/*.txt")

    assert fingerprints(result) == {
        str(notes / "alias.txt"): sha("inside\n"),
        str(notes / "inside.txt"): sha("inside\n"),
    }
    assert result.warnings == [
        f"skipped symlink {notes / 'key.txt'} -> {outside / 'secret.txt'}: " + REASON
    ]


def test_a_folder_link_out_of_the_workspace_is_skipped_for_every_glob_shape(
    layout: tuple[Path, Path],
) -> None:
    workspace, outside = layout
    link = workspace / "notes" / "ext"
    link.symlink_to(outside)
    folder = f"skipped symlink {link} -> {outside}"
    file = f"skipped symlink {link / 'secret.txt'} -> {outside / 'secret.txt'}"

    # A folder link is never listed, and named once; a file named through it is
    # judged on its own.
    for globs, expected in (
        ("notes/**/*.txt", folder),
        ("notes/*/*.txt", folder),
        ("notes/ext/*.txt", folder),
        ("**/*.txt", folder),
        ("notes/ext/secret.txt", file),
    ):
        result = observe(workspace, globs)
        assert SECRET not in json.dumps(result.next_state), globs
        assert str(link / "secret.txt") not in fingerprints(result)
        assert [item.split(":")[0] for item in result.warnings] == [expected], globs


def test_a_chain_is_judged_by_where_it_finally_resolves(layout: tuple[Path, Path]) -> None:
    workspace, outside = layout
    notes = workspace / "notes"
    # inside -> inside -> outside: skipped.
    (workspace / "hop").symlink_to(outside / "secret.txt")
    (notes / "chain.txt").symlink_to(workspace / "hop")
    # inside -> outside -> inside: the content read is the workspace's own.
    (outside / "back").symlink_to(notes / "inside.txt")
    (notes / "back.txt").symlink_to(outside / "back")

    result = observe(workspace, "notes/*.txt")

    assert sorted(fingerprints(result)) == [str(notes / "back.txt"), str(notes / "inside.txt")]
    assert [item.split(" -> ")[0] for item in result.warnings] == [
        f"skipped symlink {notes / 'chain.txt'}"
    ]


def test_an_approved_target_is_followed_but_a_link_inside_it_cannot_escape_further(
    layout: tuple[Path, Path],
) -> None:
    workspace, outside = layout
    approved = outside / "shared"
    approved.mkdir()
    (approved / "doc.txt").write_text("shared doc\n")
    (approved / "escape.txt").symlink_to(outside / "secret.txt")
    (workspace / "notes" / "shared").symlink_to(approved)

    unapproved = observe(workspace, "notes/shared/*.txt")
    assert fingerprints(unapproved) == {}
    assert unapproved.outcome == "no-files-matched"

    result = observe(workspace, "notes/shared/*.txt", approved=[approved])
    link = workspace / "notes" / "shared"
    assert fingerprints(result) == {str(link / "doc.txt"): sha("shared doc\n")}
    assert result.warnings == [
        f"skipped symlink {link / 'escape.txt'} -> {outside / 'secret.txt'}: " + REASON
    ]


def test_a_link_retargeted_out_of_the_workspace_never_reports_the_outside_content(
    layout: tuple[Path, Path],
) -> None:
    workspace, outside = layout
    link = workspace / "notes" / "moving.txt"
    link.symlink_to(workspace / "notes" / "inside.txt")
    first = observe(workspace, "notes/*.txt")
    assert str(link) in fingerprints(first)

    link.unlink()
    link.symlink_to(outside / "secret.txt")
    second = observe(workspace, "notes/*.txt", state=first.next_state)

    assert str(link) not in fingerprints(second)
    assert [(item.object_key, item.change_kind) for item in second.observations] == [
        (str(link), "descoped")
    ]
    assert SECRET not in json.dumps([item.to_json() for item in second.observations])


def test_a_workspace_reached_through_a_symlink_is_still_inside(
    layout: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, _outside = layout
    alias = tmp_path / "alias-of-workspace"
    alias.symlink_to(workspace)
    (workspace / "notes" / "alias.txt").symlink_to(workspace / "notes" / "inside.txt")

    result = observe(alias, "notes/*.txt")

    assert sorted(fingerprints(result)) == [
        str(alias / "notes" / "alias.txt"),
        str(alias / "notes" / "inside.txt"),
    ]
    assert result.warnings == []


def test_links_within_an_outside_folder_the_definition_names_stay_followed(
    layout: tuple[Path, Path],
) -> None:
    # Reading ../outside is the definition's own choice, once approved; a link that
    # stays inside what it names is no escape.
    workspace, outside = layout
    (outside / "alias.txt").symlink_to(outside / "secret.txt")

    result = observe(workspace, "../outside/*.txt", approved=[outside])

    assert sorted(fingerprints(result)) == [
        str(outside / "alias.txt"),
        str(outside / "secret.txt"),
    ]
    assert result.warnings == []


# ------------------------------------------------------------------------- monitor test

MONITOR = """---
name: Notes
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the note.
"""


def write_monitor(workspace: Path) -> str:
    folder = workspace / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    return str(folder / "MONITOR.md")


def test_monitor_test_lists_skipped_links(
    layout: tuple[Path, Path], run_cli: Callable[..., CliResult]
) -> None:
    workspace, outside = layout
    monitor = write_monitor(workspace)
    (workspace / "notes" / "key.txt").symlink_to(outside / "secret.txt")

    text = run_cli("monitor", "test", monitor)
    assert text.code == 0, text.err
    expected = (
        f"skipped symlink {workspace / 'notes' / 'key.txt'} -> {outside / 'secret.txt'}: " + REASON
    )
    assert f"Warning: {expected}" in text.err.splitlines()

    as_json = run_cli("monitor", "test", monitor, "--format", "json")
    assert as_json.code == 0, as_json.err
    assert json.loads(as_json.out)["warnings"] == [expected]


def test_monitor_test_names_the_skipped_link_when_nothing_else_matched(
    layout: tuple[Path, Path], run_cli: Callable[..., CliResult]
) -> None:
    workspace, outside = layout
    monitor = write_monitor(workspace)
    os.remove(workspace / "notes" / "inside.txt")
    (workspace / "notes" / "key.txt").symlink_to(outside / "secret.txt")

    result = run_cli("monitor", "test", monitor, "--format", "json")

    assert result.code == 1
    report = json.loads(result.out)
    assert report["outcome"] == "no-files-matched"
    assert [item.split(":")[0] for item in report["warnings"]] == [
        f"skipped symlink {workspace / 'notes' / 'key.txt'} -> {outside / 'secret.txt'}"
    ]


def test_a_link_into_an_outside_folder_the_definition_names_is_followed(
    layout: tuple[Path, Path],
) -> None:
    # What the warning advises: naming the target in watch.globs (which makes a project
    # monitor wait for approval) lets the workspace's link to it be read.
    workspace, outside = layout
    link = workspace / "notes" / "ext"
    link.symlink_to(outside)

    result = observe(workspace, ["notes/*/*.txt", "../outside/*.txt"], approved=[outside])

    assert sorted(fingerprints(result)) == sorted(
        [str(link / "secret.txt"), str(outside / "secret.txt")]
    )
    assert result.warnings == []

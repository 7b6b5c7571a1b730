"""Helpers shared by the MONITOR.md parsing and validation tests.

The suite-wide ``tests/conftest.py`` already gives every test its own HOME and working
folder and provides ``run_cli``; these fixtures add a monitors folder and a way to run
``validate --format json`` over it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

Run = Callable[..., CliResult]
Validate = Callable[..., tuple[int, dict[str, Any]]]

SCHEDULE_WATCH = ("watch:", "  type: schedule", "  cron: '0 9 * * 1-5'")


def frontmatter(*lines: str, body: str = "") -> str:
    """A monitor file: the given YAML lines between ``---`` fences, then ``body``."""
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n" + body


def write_monitor(
    root: Path, monitor_id: str, content: str | bytes, *, folder: bool = False
) -> Path:
    """Write ``content`` as ``<root>/<id>/MONITOR.md`` (folder form) or ``<root>/<id>.md``."""
    path = root / monitor_id / "MONITOR.md" if folder else root / f"{monitor_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def line_of(content: str | bytes, needle: str) -> int:
    """The 1-based line of the first line of ``content`` containing ``needle``."""
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} is not in the monitor text")


@pytest.fixture
def monitors_dir(tmp_path: Path) -> Path:
    root = tmp_path / "monitors"
    root.mkdir()
    return root


@pytest.fixture
def validate_json(run_cli: Run) -> Validate:
    """``agentmonitors validate <paths> --format json`` → (exit code, parsed report)."""

    def invoke(*paths: Path | str) -> tuple[int, dict[str, Any]]:
        result = run_cli("validate", *(str(path) for path in paths), "--format", "json")
        assert result.out.strip(), result.err
        report: dict[str, Any] = result.json()
        return result.code, report

    return invoke


def errors_by_id(report: dict[str, Any]) -> dict[str, str]:
    """``errors[]`` keyed by monitor id (the JSON ``filePath`` field carries the id)."""
    found: dict[str, str] = {}
    for entry in report["errors"]:
        assert entry["filePath"] not in found, f"two error entries for {entry['filePath']}"
        found[entry["filePath"]] = entry["error"]
    return found

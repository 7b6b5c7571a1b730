"""``expect: {change-within: ...}`` as an author meets it: the JSON Schema an editor
reads, and what ``validate`` says of a wrong value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from tests.conftest import CliResult

Run = Callable[..., CliResult]

PLAIN = {"watch": {"type": "file-fingerprint", "globs": "a"}}


@pytest.fixture
def validator(run_cli: Run) -> Draft7Validator:
    result = run_cli("schema", "generate")
    assert result.code == 0
    return Draft7Validator(result.json())


@pytest.mark.parametrize("window", ["1s", "90s", "30m", "2h", "7d"])
def test_the_schema_accepts_a_window(validator: Draft7Validator, window: str) -> None:
    assert list(validator.iter_errors({**PLAIN, "expect": {"change-within": window}})) == []


@pytest.mark.parametrize(
    "expect", ["2h", {}, {"change-within": "0s"}, {"change-within": "500ms"}, {"change-within": 5}]
)
def test_the_schema_refuses_what_validate_refuses(
    validator: Draft7Validator, expect: object
) -> None:
    assert list(validator.iter_errors({**PLAIN, "expect": expect}))


def write(root: Path, monitor_id: str, expect: str) -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        f"---\nwatch:\n  type: file-fingerprint\n  globs: a\nexpect:{expect}\n---\nBody.\n"
    )


def test_validate_names_the_field_and_the_form_it_wants(
    isolated_environment: Path, run_cli: Run
) -> None:
    root = isolated_environment
    write(root, "zero", "\n  change-within: 0s")
    write(root, "missing", "\n  change-withn: 2h")
    write(root, "scalar", " 2h")
    write(root, "good", "\n  change-within: 2h")
    result = run_cli("validate", ".claude/monitors")
    assert result.code == 1
    out = result.out
    assert (
        "zero: expect.change-within: Must be a duration of at least one second: a whole number"
        ' without a leading zero and a unit of s, m, h or d (e.g. "30m", "2h", "1d")'
        ' (found string "0s", line 6)'
    ) in out
    assert "missing: expect.change-within: is required (line 5)" in out
    assert (
        'missing: unknown key "expect.change-withn" is ignored — did you mean "change-within"?'
        in out
    )
    assert 'scalar: expect: expected a mapping (found string "2h", line 5)' in out
    assert "Valid monitors: 1\n  good: good" in out

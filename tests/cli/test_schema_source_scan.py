from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from agentmonitors.catalog.scaffold import SOURCE_TYPES, render_template
from agentmonitors.monitor.frontmatter import split_document
from agentmonitors.monitor.frontmatter_yaml import load_frontmatter
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def frontmatter_of(text: str) -> object:
    return load_frontmatter(split_document(text)).data


@pytest.fixture
def schema(run_cli: Run) -> dict[str, object]:
    result = run_cli("schema", "generate")
    assert result.code == 0
    data: dict[str, object] = result.json()
    return data


def test_schema_shape(schema: dict[str, object]) -> None:
    Draft7Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["required"] == ["watch"]
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert properties["watch"]["properties"]["type"]["enum"] == list(SOURCE_TYPES)
    assert len(properties["notify"]["oneOf"]) == 3
    assert "$ref" not in json.dumps(schema)
    all_of = schema["allOf"]
    assert isinstance(all_of, list) and len(all_of) == len(SOURCE_TYPES)


@pytest.mark.parametrize("source_type", SOURCE_TYPES)
def test_schema_accepts_every_template(schema: dict[str, object], source_type: str) -> None:
    data = frontmatter_of(render_template(source_type, name="x"))
    assert list(Draft7Validator(schema).iter_errors(data)) == []


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"watch": {"type": "file-fingerprint"}},
        {"watch": {"type": "file-fingerprint", "globs": 42}},
        {"watch": {"type": "schedule"}},
        {"watch": {"type": "unknown-thing"}},
        {"watch": {"type": "api-poll", "url": "u"}, "urgency": "critical"},
        {"watch": {"type": "api-poll", "url": "u"}, "notify": {"strategy": "debounce"}},
        {"name": "", "watch": {"type": "api-poll", "url": "u"}},
    ],
)
def test_schema_rejects_what_validate_rejects(
    schema: dict[str, object], frontmatter: dict[str, object]
) -> None:
    assert list(Draft7Validator(schema).iter_errors(frontmatter))


def test_schema_to_file(run_cli: Run) -> None:
    result = run_cli("schema", "generate", "-o", "s.json")
    assert result.code == 0
    assert result.out.strip() == "Schema written to s.json"
    assert json.loads(Path("s.json").read_text())["title"] == "Agent Monitor Definition"


def test_source_list(run_cli: Run) -> None:
    entries = run_cli("source", "list", "--format", "json").json()
    assert [entry["name"] for entry in entries] == list(SOURCE_TYPES)
    by_name = {entry["name"]: entry for entry in entries}
    assert by_name["file-fingerprint"]["required"] == ["globs"]
    assert by_name["file-fingerprint"]["defaults"]["interval"] == "30s"
    assert by_name["api-poll"]["defaults"]["interval"] == "5m"
    assert by_name["schedule"]["defaults"]["timezone"] == "UTC"
    assert by_name["command-poll"]["configFields"] == by_name["command-poll"]["scopeFields"]
    assert "globs" in by_name["file-fingerprint"]["fieldDescriptions"]
    text = run_cli("source", "list", "--format", "text").out
    assert "file-fingerprint" in text and "globs (required)" in text


def test_scan_reports_errors_without_aborting(run_cli: Run) -> None:
    root = Path("mons")
    (root / "good").mkdir(parents=True)
    (root / "good" / "MONITOR.md").write_text(
        "---\nwatch: {type: schedule, cron: '* * * * *'}\n---\n"
    )
    (root / "bad.md").write_text("---\nwatch: [\n---\n")
    (root / "README.md").write_text("# these are my monitors\n")
    result = run_cli("scan", "mons", "--format", "json")
    assert result.code == 1
    data = result.json()
    assert [m["id"] for m in data["monitors"]] == ["good"]
    assert data["errors"][0]["filePath"].endswith("bad.md")
    assert "Failed to parse YAML frontmatter" in data["errors"][0]["error"]
    text = run_cli("scan", "mons").out
    assert "1 file(s) failed to parse." in text


def test_scan_empty_and_duplicates(run_cli: Run) -> None:
    Path("empty").mkdir()
    result = run_cli("scan", "empty")
    assert (result.code, result.out.strip()) == (0, "No monitors found.")
    dup = Path("dup")
    (dup / "x").mkdir(parents=True)
    (dup / "x" / "MONITOR.md").write_text("---\nwatch: {type: a}\n---\n")
    (dup / "x.md").write_text("---\nwatch: {type: a}\n---\n")
    data = run_cli("scan", "dup", "--format", "json")
    assert data.code == 1
    assert data.json()["duplicateIds"][0]["id"] == "x"
    assert len(data.json()["duplicateIds"][0]["filePaths"]) == 2


def test_user_scope_is_merged_and_project_wins(run_cli: Run, isolated_environment: Path) -> None:
    import os

    user = Path(os.environ["HOME"]) / ".claude" / "monitors"
    for root, ident, cron in ((user, "shared", "1 * * * *"), (user, "mine", "2 * * * *")):
        (root / ident).mkdir(parents=True)
        (root / ident / "MONITOR.md").write_text(
            f"---\nwatch: {{type: schedule, cron: '{cron}'}}\n---\n"
        )
    project = isolated_environment / ".claude" / "monitors" / "shared"
    project.mkdir(parents=True)
    (project / "MONITOR.md").write_text("---\nwatch: {type: schedule, cron: '3 * * * *'}\n---\n")
    report = run_cli("validate", "--format", "json").json()
    paths = {m["id"]: m["filePath"] for m in report["monitors"]}
    assert set(paths) == {"shared", "mine"}
    assert paths["shared"] == str(project / "MONITOR.md")
    assert any("shadows" in w["warning"] and w["id"] == "shared" for w in report["warnings"])
    # An explicit folder is only that folder.
    only = run_cli("validate", ".claude/monitors", "--format", "json").json()
    assert [m["id"] for m in only["monitors"]] == ["shared"]


def test_validate_accepts_files_and_reports_missing_paths(run_cli: Run) -> None:
    Path("one.md").write_text("---\nwatch: {type: schedule, cron: '0 9 * * 1-5'}\n---\n")
    result = run_cli("validate", "one.md", "nowhere", "--format", "json")
    assert result.code == 1
    data = result.json()
    assert data["valid"] == 1
    assert data["error"] == 'path "nowhere" does not exist'
    assert run_cli("validate", "one.md").code == 0


def test_validate_with_nothing_to_check(run_cli: Run) -> None:
    result = run_cli("validate")
    assert result.code == 1
    assert "does not exist" in result.err
    assert "agentmonitors init" in result.err


def test_frontmatter_and_source_errors_are_reported_together(run_cli: Run) -> None:
    Path("m").mkdir()
    Path("m/both.md").write_text(
        "---\nwatch:\n  type: file-fingerprint\n  globs: 42\nurgency: urgent\n---\n"
    )
    report = run_cli("validate", "m", "--format", "json").json()
    error = report["errors"][0]["error"]
    assert "urgency: urgency bounds must each be one of" in error
    assert '(found string "urgent", line 5)' in error
    assert "watch.globs: expected a glob string or a list of glob strings" in error
    assert "(found integer 42, line 4)" in error

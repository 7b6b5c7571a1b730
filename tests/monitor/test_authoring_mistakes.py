"""Authoring mistakes that used to pass in silence, or were reported twice or under
another name than the author wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.monitor.conftest import (
    Run,
    Validate,
    errors_by_id,
    frontmatter,
    line_of,
    write_monitor,
)


def warnings_of(report: dict[str, object], monitor_id: str) -> list[str]:
    entries = report["warnings"]
    assert isinstance(entries, list)
    return [entry["warning"] for entry in entries if entry["id"] == monitor_id]


NESTED_TYPOS = frontmatter(
    "watch:",
    "  type: api-poll",
    "  url: https://example.com/status",
    "  intervl: 5m",
    "  auth:",
    "    type: bearer",
    "    token-env: STATUS_TOKEN",
    "    tokn: x",
    "  change-detection:",
    "    strategy: json-diff",
    "    colection:",
    "      path: items",
    "notify:",
    "  strategy: debounce",
    "  settle-for: 30s",
    "  setle-for: 5s",
    "shape:",
    "  derive:",
    "    - name: urgent",
    "      when: 'true'",
    "      whn: 'false'",
)


def test_unknown_keys_at_any_depth_are_warned_with_the_nearest_key(
    monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(monitors_dir, "typos", NESTED_TYPOS)
    code, report = validate_json(monitors_dir)
    assert code == 0, report
    warnings = warnings_of(report, "typos")
    expected = {
        "watch.intervl": '"interval"',
        "watch.auth.tokn": '"token"',
        "watch.change-detection.colection": '"collection"',
        "notify.setle-for": '"settle-for"',
        "shape.derive.0.whn": '"when"',
    }
    assert len(warnings) == len(expected), warnings
    for key, nearest in expected.items():
        (warning,) = [text for text in warnings if f'unknown key "{key}"' in text]
        assert f"did you mean {nearest}?" in warning
        leaf = key.rsplit(".", 1)[1]
        assert f"(line {line_of(NESTED_TYPOS, f'{leaf}:')})" in warning


def test_warnings_are_shown_even_when_the_monitor_also_has_an_error(
    monitors_dir: Path, validate_json: Validate, run_cli: Run
) -> None:
    content = frontmatter(
        "watch:",
        "  type: file-fingerprint",
        "  globs: ['docs/**']",
        "  intervl: 5s",
        "notify:",
        "  strategy: debounce",
        "  setle-for: 5s",
    )
    write_monitor(monitors_dir, "typo", content)
    code, report = validate_json(monitors_dir)
    assert code == 1
    # The typo is the cause of the error: the warning that says so must be there too.
    assert errors_by_id(report)["typo"].startswith("notify.settle-for: is required")
    assert sorted(text.split(" is ignored")[0] for text in warnings_of(report, "typo")) == [
        'unknown key "notify.setle-for"',
        'unknown key "watch.intervl"',
    ]
    text = run_cli("validate", str(monitors_dir))
    assert 'unknown key "notify.setle-for" is ignored — did you mean "settle-for"?' in text.out


def test_a_closed_block_reports_an_unknown_key_once_as_an_error(
    monitors_dir: Path, validate_json: Validate
) -> None:
    content = frontmatter(
        "watch:",
        "  type: command-poll",
        "  command: [git, status]",
        "  change-detection:",
        "    strategy: text-diff",
        "    stratgy: json-diff",
    )
    write_monitor(monitors_dir, "closed", content)
    code, report = validate_json(monitors_dir)
    assert code == 1
    error = errors_by_id(report)["closed"]
    assert error.count("stratgy") == 1, error
    assert error.startswith("watch.change-detection.stratgy:")
    assert warnings_of(report, "closed") == []


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        (("  type: file-fingerprint", "  globs: 5"), "watch.globs"),
        (("  type: file-fingerprint", "  globs: []", "  interval: 5 minutes"), "watch.interval"),
        (("  type: schedule", "  cron: '0 9 * *'"), "watch.cron"),
        (("  type: api-poll", "  url: https://x.test", "  auth: {token: t}"), "watch.auth.type"),
    ],
)
def test_field_paths_name_what_the_author_wrote_and_each_mistake_is_one_error(
    monitors_dir: Path, validate_json: Validate, lines: tuple[str, ...], field: str
) -> None:
    write_monitor(monitors_dir, "bad", frontmatter("watch:", *lines))
    code, report = validate_json(monitors_dir)
    assert code == 1
    error = errors_by_id(report)["bad"]
    assert "scope." not in error
    assert f"{field}:" in error
    problems = error.split("; ")
    assert len(problems) == len(set(problems)), error
    assert sum(problem.startswith(f"{field}:") for problem in problems) == 1, error


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/status", 'scheme found: "ftp:"'),
        ("localhost:8080/status", 'scheme found: "localhost:"'),
        ("not a url", "scheme found: none"),
        ("https://", "with a host"),
        ("http://example.com:port/", "must be an http(s) URL"),
    ],
)
def test_api_poll_url_must_be_http_or_https(
    monitors_dir: Path, validate_json: Validate, url: str, reason: str
) -> None:
    content = frontmatter("watch:", "  type: api-poll", f"  url: '{url}'")
    write_monitor(monitors_dir, "api", content)
    code, report = validate_json(monitors_dir)
    assert code == 1
    error = errors_by_id(report)["api"]
    assert error.startswith("watch.url: must be an http")
    assert reason in error
    assert f"line {line_of(content, 'url:')}" in error


def test_a_composite_part_url_must_be_http_or_https(
    monitors_dir: Path, validate_json: Validate
) -> None:
    content = frontmatter(
        "watch:",
        "  type: api-poll",
        "  change-detection:",
        "    strategy: json-diff",
        "    composite:",
        "      object-key: release",
        "      parts:",
        "        - id: notes",
        "          url: file:///etc/passwd",
    )
    write_monitor(monitors_dir, "parts", content)
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert 'scheme found: "file:"' in errors_by_id(report)["parts"]


def test_the_incoming_changes_scaffold_follows_head(run_cli: Run) -> None:
    created = run_cli("init", "pulls", "--yes", "--type", "incoming-changes")
    assert created.code == 0, created.err
    text = Path(".claude/monitors/pulls/MONITOR.md").read_text()
    assert "\n  branch:" not in text
    assert "# branch: main" in text
    checked = run_cli("validate", "--format", "json")
    assert checked.code == 0, checked.out


def test_schema_generate_creates_missing_folders(run_cli: Run) -> None:
    result = run_cli("schema", "generate", "-o", ".vscode/schemas/monitor.schema.json")
    assert result.code == 0, result.err
    written = Path(".vscode/schemas/monitor.schema.json")
    assert written.is_file()
    assert '"$schema"' in written.read_text()

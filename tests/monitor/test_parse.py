"""Positive parsing of MONITOR.md files, their defaults and warnings, and discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmonitors.monitor.discovery import scan_root
from agentmonitors.monitor.model import DEFAULT_URGENCY, MonitorDefinition, UrgencyBand
from agentmonitors.monitor.parse import (
    ParseFailure,
    monitor_id_for,
    parse_monitor,
    parse_monitor_file,
)
from tests.monitor.conftest import (
    SCHEDULE_WATCH,
    Run,
    Validate,
    frontmatter,
    line_of,
    write_monitor,
)

FULL_MONITOR = """\
---
name: Docs watch
watch:
  type: file-fingerprint
  globs: ['docs/**/*.md', 'README.md']
  ignore: 'docs/drafts/**'
  interval: 1m
urgency: normal..high
notify:
  strategy: rollup
  window: '0 17 * * 1-5'
  timezone: Europe/Paris
baseline-strategy: incremental
shape:
  derive:
    - name: past-due
      when: 'due < now'
  render: rendered
payload:
  form: structured
  transform:
    language: jq
    expression: '.sets | map({weight: .weight})'
  encoding: toon
tags: [docs, team-a]
---

# When the docs change

Summarise what changed and who should review it.
"""
FULL_BODY = "\n# When the docs change\n\nSummarise what changed and who should review it.\n"


def parsed(text: str, path: str = "/monitors/sample.md") -> MonitorDefinition:
    outcome = parse_monitor(text, path)
    assert isinstance(outcome, MonitorDefinition), outcome
    return outcome


def failed(text: str, path: str = "/monitors/sample.md") -> ParseFailure:
    outcome = parse_monitor(text, path)
    assert isinstance(outcome, ParseFailure), outcome
    return outcome


# ---------------------------------------------------------------- full and minimal


def test_full_monitor_parses(monitors_dir: Path) -> None:
    path = write_monitor(monitors_dir, "docs-watch", FULL_MONITOR, folder=True)
    monitor = parse_monitor_file(str(path))
    assert isinstance(monitor, MonitorDefinition), monitor
    assert monitor.id == "docs-watch"
    assert monitor.file_path == str(path)
    assert monitor.display_name == "Docs watch"
    assert monitor.source_name == "file-fingerprint"
    assert monitor.source_config == {
        "globs": ["docs/**/*.md", "README.md"],
        "ignore": "docs/drafts/**",
        "interval": "1m",
    }
    assert monitor.watch_raw == {"type": "file-fingerprint", **monitor.source_config}
    fm = monitor.frontmatter
    assert fm.watch.interval == "1m"
    assert fm.urgency == UrgencyBand("normal", "high")
    assert (fm.band.lo, fm.band.hi) == ("normal", "high")
    assert monitor.notify_as_authored() == {
        "strategy": "rollup",
        "window": "0 17 * * 1-5",
        "timezone": "Europe/Paris",
    }
    assert fm.baseline_strategy == "incremental"
    assert fm.shape is not None and fm.shape.derive is not None
    assert [(rule.name, rule.when) for rule in fm.shape.derive] == [("past-due", "due < now")]
    assert fm.shape.render == "rendered"
    assert fm.payload is not None and fm.payload.transform is not None
    assert fm.payload.form == "structured"
    assert fm.payload.transform.language == "jq"
    assert fm.payload.transform.expression == ".sets | map({weight: .weight})"
    assert fm.payload.encoding == "toon"
    assert fm.tags == ("docs", "team-a")
    assert monitor.body == FULL_BODY
    assert monitor.instructions == (
        "# When the docs change\n\nSummarise what changed and who should review it."
    )
    assert monitor.warnings == ()


def test_full_monitor_is_valid_and_scans(monitors_dir: Path, run_cli: Run) -> None:
    write_monitor(monitors_dir, "docs-watch", FULL_MONITOR, folder=True)
    report = run_cli("validate", str(monitors_dir), "--format", "json")
    assert report.code == 0, report.out
    data = report.json()
    assert (data["valid"], data["invalid"], data["warnings"]) == (1, 0, [])
    assert data["monitors"][0]["name"] == "Docs watch"
    scan = run_cli("scan", str(monitors_dir), "--format", "json")
    assert scan.code == 0
    [entry] = scan.json()["monitors"]
    assert entry["urgency"] == "normal"
    assert entry["urgencyMax"] == "high"
    assert entry["tags"] == ["docs", "team-a"]
    assert entry["notify"] == {
        "strategy": "rollup",
        "window": "0 17 * * 1-5",
        "timezone": "Europe/Paris",
    }


def test_minimal_monitor_gets_the_defaults() -> None:
    monitor = parsed("---\nwatch:\n  type: schedule\n---\n", "/monitors/tick/MONITOR.md")
    assert monitor.id == "tick"
    assert monitor.display_name == "tick"
    fm = monitor.frontmatter
    assert fm.name is None
    assert fm.urgency is None
    assert fm.band == DEFAULT_URGENCY == UrgencyBand("normal", "normal")
    assert fm.baseline_strategy == "net"
    assert (fm.notify, fm.shape, fm.payload, fm.tags) == (None, None, None, None)
    assert fm.watch.interval is None
    assert monitor.source_config == {}
    assert monitor.notify_as_authored() is None
    assert (monitor.body, monitor.instructions) == ("", "")
    assert monitor.warnings == ()


def test_parsing_does_not_consult_the_source_registry() -> None:
    monitor = parsed("---\nwatch: {type: not-yet-written, anything: [1, {a: b}]}\n---\n")
    assert monitor.source_name == "not-yet-written"
    assert monitor.source_config == {"anything": [1, {"a": "b"}]}


def test_relative_path_is_reported_absolute_and_scope_is_kept(monitors_dir: Path) -> None:
    write_monitor(monitors_dir, "rel", frontmatter(*SCHEDULE_WATCH))
    relative = Path("..") / "monitors" / "rel.md"  # the working folder is tmp_path/work
    monitor = parse_monitor_file(str(relative), "user")
    assert isinstance(monitor, MonitorDefinition), monitor
    assert monitor.file_path == str(monitors_dir / "rel.md")
    assert monitor.scope == "user"


# ---------------------------------------------------------------- body


def test_body_is_kept_verbatim_and_instructions_are_trimmed() -> None:
    body = "\n\n  # Title  \n\nText with a --- rule below\n---\nnot: frontmatter\n\n\t\n"
    monitor = parsed(frontmatter(*SCHEDULE_WATCH, body=body))
    assert monitor.body == body
    assert monitor.instructions == "# Title  \n\nText with a --- rule below\n---\nnot: frontmatter"


def test_closing_fence_at_end_of_file_without_newline() -> None:
    monitor = parsed("---\nwatch: {type: schedule}\n---")
    assert (monitor.body, monitor.instructions) == ("", "")


def test_fences_may_carry_trailing_whitespace() -> None:
    monitor = parsed("---  \nwatch: {type: schedule}\n--- \t\nBody\n")
    assert monitor.instructions == "Body"


def test_byte_order_mark_is_tolerated(monitors_dir: Path) -> None:
    text = frontmatter("name: With BOM", *SCHEDULE_WATCH, body="Hello\n")
    path = monitors_dir / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    monitor = parse_monitor_file(str(path))
    assert isinstance(monitor, MonitorDefinition), monitor
    assert monitor.display_name == "With BOM"
    assert monitor.body == "Hello\n"


def test_byte_order_mark_keeps_line_numbers() -> None:
    text = frontmatter(*SCHEDULE_WATCH, "urgency: urgent")
    error = failed("\ufeff" + text).error
    assert error.endswith(f"line {line_of(text, 'urgency:')})"), error


CRLF_TEXT = (
    "---\r\nname: Windows\r\nurgncy: high\r\nwatch:\r\n  type: schedule\r\n---\r\n"
    "\r\nLine one\r\n\r\nLine two\r\n"
)


def test_crlf_text_parses_with_body_verbatim_and_right_lines() -> None:
    monitor = parsed(CRLF_TEXT)
    assert monitor.display_name == "Windows"
    assert monitor.source_name == "schedule"
    assert monitor.body == "\r\nLine one\r\n\r\nLine two\r\n"
    assert monitor.instructions == "Line one\r\n\r\nLine two"
    assert monitor.warnings == (
        'unknown key "urgncy" is ignored — did you mean "urgency"? (line 3)',
    )


def test_crlf_error_lines() -> None:
    text = "---\r\nwatch:\r\n  type: schedule\r\nurgency: high..low\r\n---\r\n"
    assert failed(text).error.endswith("line 4)")


def test_crlf_file_on_disk(monitors_dir: Path, run_cli: Run) -> None:
    path = monitors_dir / "crlf.md"
    path.write_bytes(
        CRLF_TEXT.replace("  type: schedule", "  type: schedule\r\n  cron: '0 9 * * *'").encode()
    )
    monitor = parse_monitor_file(str(path))
    assert isinstance(monitor, MonitorDefinition), monitor
    assert monitor.display_name == "Windows"
    assert monitor.body.splitlines() == ["", "Line one", "", "Line two"]
    assert monitor.instructions.splitlines() == ["Line one", "", "Line two"]
    result = run_cli("validate", str(monitors_dir), "--format", "json")
    assert result.code == 0, result.out


# ---------------------------------------------------------------- YAML 1.2


@pytest.mark.parametrize("value", ["yes", "no", "on", "off", "y", "n", "Yes", "OFF", "1:30"])
def test_yaml_1_1_booleans_and_sexagesimals_stay_strings(value: str) -> None:
    monitor = parsed(frontmatter(f"name: {value}", "watch: {type: schedule}"))
    assert monitor.frontmatter.name == value


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("0o17", "integer 15"),  # YAML 1.2 octal
        ("017", "integer 17"),  # decimal in YAML 1.2 (octal 15 in YAML 1.1)
        ("0x1F", "integer 31"),
        ("1.5", "number 1.5"),
        ("true", "boolean true"),
        ("[a]", "a list of 1 item"),
    ],
)
def test_non_string_names_are_errors(value: str, found: str) -> None:
    error = failed(frontmatter(f"name: {value}", "watch: {type: schedule}")).error
    assert error == f"name: expected a string (found {found}, line 2)"


def test_date_like_values_stay_strings() -> None:
    monitor = parsed(
        frontmatter("name: 2024-01-31", "watch: {type: schedule}", "tags: [2024-02-01]")
    )
    assert monitor.frontmatter.name == "2024-01-31"
    assert monitor.frontmatter.tags == ("2024-02-01",)


def test_null_name_falls_back_to_the_id() -> None:
    monitor = parsed(frontmatter("name:", "watch: {type: schedule}"), "/m/fallback.md")
    assert monitor.frontmatter.name is None
    assert monitor.display_name == "fallback"


def test_quoted_values_stay_strings() -> None:
    monitor = parsed(frontmatter("name: '0o17'", "watch: {type: schedule}", "tags: ['1', 'yes']"))
    assert monitor.frontmatter.name == "0o17"
    assert monitor.frontmatter.tags == ("1", "yes")


# ---------------------------------------------------------------- urgency


@pytest.mark.parametrize(
    ("authored", "lo", "hi"),
    [
        ("low", "low", "low"),
        ("normal", "normal", "normal"),
        ("high", "high", "high"),
        ("normal..high", "normal", "high"),
        ("normal .. high", "normal", "high"),
        ("' low..normal '", "low", "normal"),
        ("low .. high", "low", "high"),
        ("high..high", "high", "high"),
    ],
)
def test_urgency_bands(authored: str, lo: str, hi: str) -> None:
    monitor = parsed(frontmatter(*SCHEDULE_WATCH, f"urgency: {authored}"))
    band = monitor.frontmatter.band
    assert (band.lo, band.hi) == (lo, hi)
    assert str(band) == (lo if lo == hi else f"{lo}..{hi}")


def test_urgency_band_reaches_scan_output(monitors_dir: Path, run_cli: Run) -> None:
    write_monitor(monitors_dir, "band", frontmatter(*SCHEDULE_WATCH, "urgency: normal .. high"))
    write_monitor(monitors_dir, "plain", frontmatter(*SCHEDULE_WATCH))
    result = run_cli("scan", str(monitors_dir), "--format", "json")
    assert result.code == 0
    bands = {m["id"]: (m["urgency"], m["urgencyMax"]) for m in result.json()["monitors"]}
    assert bands == {"band": ("normal", "high"), "plain": ("normal", "normal")}


@pytest.mark.parametrize(
    ("salience", "effective"),
    [(None, "normal"), ("low", "normal"), ("normal", "normal"), ("high", "high"), ("x", "normal")],
)
def test_effective_urgency_is_clamped_into_the_band(salience: str | None, effective: str) -> None:
    assert UrgencyBand("normal", "high").clamp(salience) == effective


# ---------------------------------------------------------------- warnings


WARNED = frontmatter(
    "name: Noisy",
    "urgncy: high",
    "watch: {type: schedule, cron: '0 9 * * *'}",
    "notify:",
    "  strategy: debounce",
    "  settle-for: 5s",
    "  setle-for: 10s",
    "shape:",
    "  derive:",
    "    - name: a",
    "      whn: x",
    "      when: 'true'",
    "  rendr: rendered",
    "payload:",
    "  form: structured",
    "  transform: {language: jq, expression: '.', langauge: x}",
    "zzqqxx: 1",
)


def test_unknown_keys_are_warned_with_nearest_key_and_line() -> None:
    monitor = parsed(WARNED)

    def at(needle: str) -> str:
        return f"(line {line_of(WARNED, needle)})"

    assert set(monitor.warnings) == {
        f'unknown key "urgncy" is ignored — did you mean "urgency"? {at("urgncy:")}',
        f'unknown key "notify.setle-for" is ignored — did you mean "settle-for"? {at("setle-for")}',
        f'unknown key "shape.rendr" is ignored — did you mean "render"? {at("rendr:")}',
        f'unknown key "shape.derive.0.whn" is ignored — did you mean "when"? {at("whn:")}',
        'unknown key "payload.transform.langauge" is ignored — did you mean "language"? '
        + at("langauge"),
        f'unknown key "zzqqxx" is ignored — the nearest known key is "expect" {at("zzqqxx")}',
    }


def test_warnings_do_not_make_a_monitor_invalid(
    monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(monitors_dir, "noisy", WARNED)
    code, report = validate_json(monitors_dir)
    assert code == 0
    assert (report["valid"], report["invalid"]) == (1, 0)
    assert len(report["warnings"]) == 6
    assert {w["id"] for w in report["warnings"]} == {"noisy"}
    assert any('did you mean "urgency"' in w["warning"] for w in report["warnings"])


@pytest.mark.parametrize(
    ("watch", "typo", "known"),
    [
        (("  type: file-fingerprint", "  globs: '*.md'"), "intervall", "interval"),
        (("  type: api-poll", "  url: https://example.com"), "methd", "method"),
        (("  type: command-poll", "  command: [date]"), "timout", "timeout"),
        (("  type: incoming-changes", "  paths: [docs]"), "brnach", "branch"),
        (("  type: schedule", "  cron: '0 9 * * *'"), "timezon", "timezone"),
    ],
)
def test_unknown_watch_keys_are_warned_at_validate_time(
    watch: tuple[str, ...], typo: str, known: str, monitors_dir: Path, validate_json: Validate
) -> None:
    text = frontmatter("watch:", *watch, f"  {typo}: 5m")
    # Parsing alone knows nothing of the source's keys.
    assert parsed(text).warnings == ()
    write_monitor(monitors_dir, "typo", text)
    code, report = validate_json(monitors_dir)
    assert code == 0
    assert report["valid"] == 1
    assert [w["warning"] for w in report["warnings"]] == [
        f'unknown key "watch.{typo}" is ignored — did you mean "{known}"? '
        f"(line {line_of(text, typo)})"
    ]


def test_schedule_interval_is_a_known_watch_key(
    monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(
        monitors_dir,
        "ticker",
        frontmatter("watch:", "  type: schedule", "  cron: '0 9 * * *'", "  interval: 5m"),
    )
    code, report = validate_json(monitors_dir)
    assert code == 0
    assert [w["warning"] for w in report["warnings"]] == [
        "watch.interval is ignored by the schedule source: watch.cron decides when it fires "
        "(the cron is checked every minute)"
    ]


def test_frontmatter_id_is_ignored_with_a_warning(monitors_dir: Path) -> None:
    path = write_monitor(monitors_dir, "real-id", frontmatter("id: other-id", *SCHEDULE_WATCH))
    monitor = parse_monitor_file(str(path))
    assert isinstance(monitor, MonitorDefinition), monitor
    assert monitor.id == "real-id"
    assert monitor.warnings == (
        '"id" is ignored: a monitor\'s id comes from its file or folder name ("real-id") (line 2)',
    )


# ---------------------------------------------------------------- ids and discovery


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/m/watcher/MONITOR.md", "watcher"),
        ("/m/a/b/MONITOR.md", "b"),
        ("/m/flat.md", "flat"),
        ("/m/foo.bar.md", "foo.bar"),
        ("/m/.hidden.md", None),
        ("/m/.hidden/MONITOR.md", None),
    ],
)
def test_monitor_id_for(path: str, expected: str | None) -> None:
    assert monitor_id_for(path) == expected


JUNK = "this is not a monitor and would fail to parse\n"


def test_discovery(monitors_dir: Path, validate_json: Validate) -> None:
    good = frontmatter(*SCHEDULE_WATCH)
    expected = {
        "flat": write_monitor(monitors_dir, "flat", good),
        "foo.bar": write_monitor(monitors_dir, "foo.bar", good),
        "watcher": write_monitor(monitors_dir, "watcher", good, folder=True),
        "a": write_monitor(monitors_dir, "a", good, folder=True),
        "b": write_monitor(monitors_dir / "a", "b", good, folder=True),
        "deep": write_monitor(monitors_dir / "x" / "y", "deep", good, folder=True),
    }
    junk = [
        monitors_dir / "README.md",  # a root README explains the folder
        monitors_dir / "MONITOR.md",  # directly in the root: not a folder monitor
        monitors_dir / ".draft.md",  # dot-files are skipped
        monitors_dir / ".hidden" / "MONITOR.md",  # and so are dot-folders
        monitors_dir / "a" / ".b" / "MONITOR.md",
        monitors_dir / "watcher" / "notes.md",  # Markdown beside a MONITOR.md
        monitors_dir / "a" / "b" / "extra.md",
        monitors_dir / "x" / "loose.md",  # Markdown in a plain subfolder
        monitors_dir / "watcher" / "monitor.md",  # the name must be MONITOR.md exactly
        monitors_dir / "notes.txt",  # not Markdown
    ]
    for path in junk:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(JUNK)

    scan = scan_root(str(monitors_dir))
    assert scan.errors == ()
    assert scan.duplicate_ids == ()
    assert {m.id: m.file_path for m in scan.monitors} == {k: str(v) for k, v in expected.items()}
    assert [m.file_path for m in scan.monitors] == sorted(str(v) for v in expected.values())

    code, report = validate_json(monitors_dir)
    assert code == 0
    assert (report["valid"], report["invalid"]) == (len(expected), 0)


def test_root_readme_is_skipped_in_any_case(monitors_dir: Path) -> None:
    (monitors_dir / "readme.md").write_text(JUNK)
    write_monitor(monitors_dir, "sub", frontmatter(*SCHEDULE_WATCH), folder=True)
    (monitors_dir / "sub" / "README.md").write_text(JUNK)
    scan = scan_root(str(monitors_dir))
    assert [m.id for m in scan.monitors] == ["sub"]
    assert scan.errors == ()


def test_missing_root_scans_as_empty(tmp_path: Path) -> None:
    scan = scan_root(str(tmp_path / "nothing-here"))
    assert (scan.monitors, scan.errors, scan.duplicate_ids) == ((), (), ())

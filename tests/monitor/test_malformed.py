"""Malformed monitors, each run through the real ``validate`` command in-process.

Every case is a real file in a monitors folder. For each one ``validate --format json``
must exit 1, report the monitor under its id, name the field path and say what is
wrong, and, where the YAML gives a line, point at the right line.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.monitor.conftest import (
    SCHEDULE_WATCH,
    Run,
    Validate,
    errors_by_id,
    frontmatter,
    line_of,
    write_monitor,
)

AVAILABLE_SOURCES = (
    "Available sources: file-fingerprint, api-poll, command-poll, schedule, incoming-changes"
)
DURATION_MESSAGE = "Must be a duration string: a whole number and a unit of ms, s, m, h or d"
NAME_BLANK = "Monitor name must contain non-whitespace characters when present"
URGENCY_BOUNDS = 'urgency bounds must each be one of "low", "normal", "high"'


@dataclass(frozen=True)
class Bad:
    """One malformed monitor and what ``validate`` must say about it."""

    id: str
    content: str | bytes
    # The dotted field path the message must name (``<path>: <message>``); None for
    # whole-file problems (YAML, reading, unknown source) that have no field.
    field: str | None
    phrases: tuple[str, ...]
    # Text of the line the error must point at (``line N``); None when there is none.
    at: str | None = None
    folder: bool = False


def bad(
    case_id: str,
    content: str | bytes,
    field: str | None,
    *phrases: str,
    at: str | None = None,
    folder: bool = False,
) -> Bad:
    return Bad(case_id, content, field, phrases, at, folder)


def ff(*extra: str) -> tuple[str, ...]:
    return ("watch:", "  type: file-fingerprint", *extra)


def api(*extra: str) -> tuple[str, ...]:
    return ("watch:", "  type: api-poll", *extra)


def cmd(*extra: str) -> tuple[str, ...]:
    return ("watch:", "  type: command-poll", *extra)


CASES: tuple[Bad, ...] = (
    # ------------------------------------------------------------ file and YAML structure
    bad(
        "yaml-unclosed-flow-list",
        frontmatter("tags: [a, b", *SCHEDULE_WATCH),
        None,
        "Failed to parse YAML frontmatter: expected ',' or ']'",
        at="watch:",
    ),
    bad(
        "yaml-unclosed-flow-mapping",
        frontmatter("watch: {type: schedule, cron: '0 9 * * 1-5'", "name: x"),
        None,
        "Failed to parse YAML frontmatter: expected ',' or '}'",
        at="name: x",
    ),
    bad(
        "yaml-bad-indentation",
        frontmatter("watch:", "  type: schedule", "   cron: '0 9 * * 1-5'"),
        None,
        "Failed to parse YAML frontmatter: mapping values are not allowed here",
        at="   cron:",
    ),
    bad(
        "yaml-tab-indentation",
        frontmatter("name: tabbed", "watch:", "\ttype: schedule"),
        None,
        "Failed to parse YAML frontmatter: found character '\\t' that cannot start any token",
        at="\ttype",
        folder=True,
    ),
    bad(
        "yaml-duplicate-key",
        frontmatter("name: first", *SCHEDULE_WATCH, "name: second"),
        None,
        'Failed to parse YAML frontmatter: duplicate key "name" (each key may appear once)',
        at="name: second",
    ),
    bad(
        "yaml-duplicate-nested-key",
        frontmatter("watch:", "  type: schedule", "  cron: '0 9 * * *'", "  type: api-poll"),
        None,
        'duplicate key "type" (each key may appear once)',
        at="type: api-poll",
    ),
    bad(
        "no-closing-fence",
        "---\nwatch:\n  type: schedule\n  cron: '0 9 * * *'\n\nBody without a fence.\n",
        None,
        "Failed to parse YAML frontmatter: the opening '---' on line 1 has no closing '---' line",
    ),
    bad(
        "no-frontmatter",
        "# Just a heading\n\nSome instructions.\n",
        "watch",
        "is required",
        "the file has no frontmatter; it must start with a '---' line",
    ),
    bad(
        "frontmatter-not-at-start",
        "\n" + frontmatter(*SCHEDULE_WATCH),
        "watch",
        "the file has no frontmatter",
    ),
    bad("empty-file", "", "watch", "is required"),
    bad("empty-frontmatter", "---\n---\nBody only.\n", "watch", "is required", folder=True),
    bad(
        "frontmatter-is-list",
        frontmatter("- watch", "- urgency"),
        None,
        "Failed to parse YAML frontmatter: expected a mapping of keys such as watch: and "
        "urgency:, found a list of 2 items",
    ),
    bad(
        "frontmatter-is-scalar",
        frontmatter("just some text"),
        None,
        "Failed to parse YAML frontmatter: expected a mapping",
        'found string "just some text"',
    ),
    bad(
        "frontmatter-integer-key",
        frontmatter("1: one", *SCHEDULE_WATCH),
        None,
        "frontmatter keys must be strings, found integer 1",
    ),
    bad(
        "invalid-utf8",
        b"---\nname: caf\xe9\nwatch:\n  type: schedule\n  cron: '0 9 * * *'\n---\n",
        None,
        "Failed to read file: not valid UTF-8 (byte 13)",
    ),
    # ------------------------------------------------------------ watch
    bad("watch-missing", frontmatter("name: No watch", "urgency: high"), "watch", "is required"),
    bad(
        "watch-is-string",
        frontmatter("watch: schedule"),
        "watch",
        "expected a mapping",
        'found string "schedule"',
        at="watch:",
    ),
    bad(
        "watch-is-list",
        frontmatter("watch:", "  - type: schedule"),
        "watch",
        "expected a mapping",
        "found a list of 1 item",
        at="watch:",
    ),
    bad(
        "watch-is-null",
        frontmatter("name: empty watch", "watch:"),
        "watch",
        "expected a mapping",
        "found null",
        at="watch:",
    ),
    bad(
        "watch-type-missing",
        frontmatter("name: x", "watch:", "  cron: '0 9 * * *'"),
        "watch.type",
        "is required",
        at="watch:",
    ),
    bad(
        "watch-type-camel-case",
        frontmatter("watch:", "  type: FileFingerprint", "  globs: '*.md'"),
        "watch.type",
        "watch.type must be kebab-case",
        'found string "FileFingerprint"',
        at="type: FileFingerprint",
    ),
    bad(
        "watch-type-snake-case",
        frontmatter("watch:", "  type: file_fingerprint", "  globs: '*.md'"),
        "watch.type",
        "watch.type must be kebab-case",
        at="type: file_fingerprint",
        folder=True,
    ),
    bad(
        "watch-type-integer",
        frontmatter("watch:", "  type: 42"),
        "watch.type",
        'expected a source name such as "file-fingerprint"',
        "found integer 42",
        at="type: 42",
    ),
    bad(
        "watch-type-unknown",
        frontmatter("name: Feed", "watch:", "  type: rss-feed", "  url: https://example.com"),
        None,
        f'Unknown source "rss-feed". {AVAILABLE_SOURCES}',
        at="type: rss-feed",
    ),
    bad(
        "watch-interval-words",
        frontmatter(*ff("  globs: '*.md'", "  interval: 5 minutes")),
        "watch.interval",
        DURATION_MESSAGE,
        'found string "5 minutes"',
        at="interval:",
    ),
    bad(
        "watch-interval-compound",
        frontmatter("watch:", "  type: incoming-changes", "  paths: [docs]", "  interval: 1h30m"),
        "watch.interval",
        DURATION_MESSAGE,
        at="interval:",
    ),
    bad(
        "watch-interval-integer",
        frontmatter(*ff("  globs: '*.md'", "  interval: 30")),
        "watch.interval",
        'expected a duration string such as "30s"',
        "found integer 30",
        at="interval:",
    ),
    # ------------------------------------------------------------ name, tags
    bad(
        "name-integer",
        frontmatter("name: 42", *SCHEDULE_WATCH),
        "name",
        "expected a string",
        "found integer 42",
        at="name:",
    ),
    bad(
        "name-octal-is-a-number",
        frontmatter(*SCHEDULE_WATCH, "name: 0o17"),
        "name",
        "expected a string",
        "found integer 15",
        at="name:",
    ),
    bad(
        "name-blank",
        frontmatter("name: '   '", *SCHEDULE_WATCH),
        "name",
        NAME_BLANK,
        at="name:",
    ),
    bad(
        "name-empty",
        frontmatter(*SCHEDULE_WATCH, 'name: ""'),
        "name",
        "Monitor name must be non-empty when present",
        at="name:",
    ),
    bad(
        "tags-string",
        frontmatter(*SCHEDULE_WATCH, "tags: docs"),
        "tags",
        "expected a list",
        'found string "docs"',
        at="tags:",
    ),
    bad(
        "tags-non-string-item",
        frontmatter(*SCHEDULE_WATCH, "tags:", "  - docs", "  - 7"),
        "tags.1",
        "expected a string",
        "found integer 7",
        at="- 7",
    ),
    # ------------------------------------------------------------ urgency
    bad(
        "urgency-integer",
        frontmatter(*SCHEDULE_WATCH, "urgency: 3"),
        "urgency",
        'expected an urgency level ("low", "normal", "high") or a "lo..hi" range',
        at="urgency:",
    ),
    bad(
        "urgency-critical",
        frontmatter(*SCHEDULE_WATCH, "urgency: critical"),
        "urgency",
        URGENCY_BOUNDS,
        'found string "critical"',
        at="urgency:",
    ),
    bad(
        "urgency-capitalised",
        frontmatter("urgency: High", *SCHEDULE_WATCH),
        "urgency",
        URGENCY_BOUNDS,
        at="urgency:",
    ),
    bad(
        "urgency-three-parts",
        frontmatter(*SCHEDULE_WATCH, "urgency: low..normal..high"),
        "urgency",
        'urgency must be a single level (e.g. "normal") or a range "lo..hi" (e.g. "normal..high")',
        at="urgency:",
    ),
    bad(
        "urgency-inverted",
        frontmatter(*SCHEDULE_WATCH, "urgency: high..low"),
        "urgency",
        'range "high..low" is inverted — the low bound must not exceed the high bound',
        at="urgency:",
    ),
    bad(
        "urgency-open-range",
        frontmatter(*SCHEDULE_WATCH, "urgency: ..high"),
        "urgency",
        URGENCY_BOUNDS,
        at="urgency:",
    ),
    bad(
        "urgency-unknown-bound",
        frontmatter(*SCHEDULE_WATCH, "urgency: low..critical"),
        "urgency",
        URGENCY_BOUNDS,
        at="urgency:",
    ),
    # ------------------------------------------------------------ notify
    bad(
        "notify-is-string",
        frontmatter(*SCHEDULE_WATCH, "notify: debounce"),
        "notify",
        "expected a mapping",
        at="notify:",
    ),
    bad(
        "notify-unknown-strategy",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: batch", "  settle-for: 5m"),
        "notify.strategy",
        "expected one of 'debounce', 'throttle', 'rollup'",
        'found string "batch"',
        at="strategy:",
    ),
    bad(
        "notify-missing-strategy",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  settle-for: 5m"),
        "notify.strategy",
        "is required",
        at="notify:",
    ),
    bad(
        "debounce-without-settle-for",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: debounce"),
        "notify.settle-for",
        "is required",
        at="notify:",
    ),
    bad(
        "throttle-without-suppress-for",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: throttle", "  settle-for: 5m"),
        "notify.suppress-for",
        "is required",
        at="notify:",
    ),
    bad(
        "rollup-without-window",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: rollup", "  timezone: UTC"),
        "notify.window",
        "is required",
        at="notify:",
    ),
    bad(
        "duration-words",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: debounce", "  settle-for: 5 minutes"),
        "notify.settle-for",
        DURATION_MESSAGE,
        'found string "5 minutes"',
        at="settle-for:",
    ),
    bad(
        "duration-compound",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: throttle", "  suppress-for: 1h30m"),
        "notify.suppress-for",
        DURATION_MESSAGE,
        'found string "1h30m"',
        at="suppress-for:",
    ),
    bad(
        "duration-fraction",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: debounce", "  settle-for: 1.5s"),
        "notify.settle-for",
        DURATION_MESSAGE,
        at="settle-for:",
        folder=True,
    ),
    bad(
        "duration-capital-unit",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: debounce", "  settle-for: 5M"),
        "notify.settle-for",
        DURATION_MESSAGE,
        at="settle-for:",
    ),
    bad(
        "duration-integer",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: throttle", "  suppress-for: 30"),
        "notify.suppress-for",
        'expected a duration string such as "30s"',
        "found integer 30",
        at="suppress-for:",
    ),
    bad(
        "rollup-window-bad-minute",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: rollup", "  window: '61 * * * *'"),
        "notify.window",
        '"61 * * * *" is not a valid cron expression',
        "minute",
        at="window:",
    ),
    bad(
        "rollup-window-four-fields",
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: rollup", "  window: '0 9 * *'"),
        "notify.window",
        'Must be a five-field cron expression (e.g., "0 9 * * 1-5")',
        at="window:",
    ),
    bad(
        "rollup-bad-timezone",
        frontmatter(
            *SCHEDULE_WATCH,
            "notify:",
            "  strategy: rollup",
            "  window: '0 17 * * 5'",
            "  timezone: Mars/Olympus_Mons",
        ),
        "notify.timezone",
        'Must be a valid IANA time zone name (e.g., "America/New_York", "UTC")',
        at="timezone:",
    ),
    # ------------------------------------------------------------ baseline, shape, payload
    bad(
        "baseline-strategy-sometimes",
        frontmatter(*SCHEDULE_WATCH, "baseline-strategy: sometimes"),
        "baseline-strategy",
        "expected one of 'net' or 'incremental'",
        'found string "sometimes"',
        at="baseline-strategy:",
    ),
    bad(
        "derive-malformed-cel",
        frontmatter(
            *SCHEDULE_WATCH,
            "shape:",
            "  derive:",
            "    - name: past-due",
            "      when: 'due < now'",
            "    - name: broken",
            "      when: 'due <'",
        ),
        "shape.derive.1.when",
        "malformed CEL predicate:",
        at="when: 'due <'",
    ),
    bad(
        "derive-empty-name",
        frontmatter(*SCHEDULE_WATCH, "shape:", "  derive:", "    - name: ''", "      when: 'true'"),
        "shape.derive.0.name",
        "shape.derive[].name must be non-empty",
        at="- name:",
    ),
    bad(
        "derive-missing-when",
        frontmatter(*SCHEDULE_WATCH, "shape:", "  derive:", "    - name: flag"),
        "shape.derive.0.when",
        "is required",
        at="- name: flag",
    ),
    bad(
        "shape-render-unknown",
        frontmatter(*SCHEDULE_WATCH, "shape:", "  render: html"),
        "shape.render",
        "expected one of 'rendered'",
        at="render:",
    ),
    bad(
        "transform-with-prose-form",
        frontmatter(
            *SCHEDULE_WATCH,
            "payload:",
            "  form: prose",
            "  transform:",
            "    language: jq",
            "    expression: '.a'",
        ),
        "payload.transform",
        'payload.transform is only valid when payload.form is "structured"',
        at="transform:",
    ),
    bad(
        "transform-malformed-jq",
        frontmatter(
            *SCHEDULE_WATCH,
            "payload:",
            "  form: structured",
            "  transform:",
            "    language: jq",
            "    expression: '.sets | map('",
        ),
        "payload.transform.expression",
        "malformed jq transform:",
        at="expression:",
    ),
    bad(
        "transform-malformed-cel",
        frontmatter(
            *SCHEDULE_WATCH,
            "payload:",
            "  form: structured",
            "  transform: {language: cel, expression: 'size(items) >'}",
        ),
        "payload.transform.expression",
        "malformed cel transform:",
        at="transform:",
    ),
    bad(
        "transform-empty-expression",
        frontmatter(
            *SCHEDULE_WATCH,
            "payload:",
            "  form: structured",
            "  transform:",
            "    language: jq",
            "    expression: ''",
        ),
        "payload.transform.expression",
        "payload.transform.expression must be non-empty",
        at="expression:",
    ),
    bad(
        "transform-unknown-language",
        frontmatter(
            *SCHEDULE_WATCH,
            "payload:",
            "  form: structured",
            "  transform:",
            "    language: python",
            "    expression: x",
        ),
        "payload.transform.language",
        "expected one of 'jq' or 'cel'",
        at="language:",
    ),
    bad(
        "payload-unknown-form",
        frontmatter(*SCHEDULE_WATCH, "payload:", "  form: html"),
        "payload.form",
        "expected one of 'prose', 'structured', 'artifact' or 'rendered'",
        at="form:",
    ),
    bad(
        "payload-unknown-encoding",
        frontmatter(*SCHEDULE_WATCH, "payload:", "  form: structured", "  encoding: xml"),
        "payload.encoding",
        "expected one of 'json', 'yaml', 'toon' or 'toml'",
        at="encoding:",
    ),
    bad(
        "legacy-source-and-scope",
        frontmatter("name: Old shape", "source: file-fingerprint", "scope:", "  globs: ['*.md']"),
        "watch",
        "is required",
        "did you mean to use the current watch shape? Move source/scope into watch:, "
        "for example: watch: { type: file-fingerprint, ... }",
    ),
    # ------------------------------------------------------------ file-fingerprint
    bad(
        "globs-integer",
        frontmatter(*ff("  globs: 42")),
        "watch.globs",
        "expected a glob string or a list of glob strings",
        "found integer 42",
        at="globs:",
    ),
    bad(
        "globs-empty-list",
        frontmatter(*ff("  globs: []")),
        "watch.globs",
        "must contain at least one pattern",
        at="globs:",
    ),
    bad(
        "globs-blank-pattern",
        frontmatter(*ff("  globs:", "    - 'docs/*.md'", "    - '   '")),
        "watch.globs",
        "must not contain empty patterns",
        at="globs:",
    ),
    bad(
        "globs-missing",
        frontmatter("name: No globs", *ff("  ignore: ['*.tmp']")),
        "watch.globs",
        "is required",
        at="watch:",
        folder=True,
    ),
    bad(
        "ignore-empty-pattern",
        frontmatter(*ff("  globs: '*.md'", "  ignore: ''")),
        "watch.ignore",
        "must not contain empty patterns",
        at="ignore:",
    ),
    # ------------------------------------------------------------ api-poll
    bad(
        "api-url-missing",
        frontmatter(*api("  method: GET")),
        "watch.url",
        "is required",
        at="watch:",
    ),
    bad(
        "api-url-empty",
        frontmatter(*api("  url: ''")),
        "watch.url",
        "must not be empty",
        at="url:",
    ),
    bad(
        "api-method-put",
        frontmatter(*api("  url: https://example.com/a", "  method: PUT")),
        "watch.method",
        "expected one of 'GET' or 'POST'",
        'found string "PUT"',
        at="method:",
    ),
    bad(
        "api-timeout-zero",
        frontmatter(*api("  url: https://example.com/a", "  timeout: 0s")),
        "watch.timeout",
        'Invalid timeout: "0s"',
        "no leading zero and at least 1 unit",
        at="timeout:",
    ),
    bad(
        "api-timeout-leading-zero",
        frontmatter(*api("  url: https://example.com/a", "  timeout: 01s")),
        "watch.timeout",
        'Invalid timeout: "01s"',
        at="timeout:",
    ),
    bad(
        "api-timeout-too-long",
        frontmatter(*api("  url: https://example.com/a", "  timeout: 25d")),
        "watch.timeout",
        'Invalid timeout: "25d" exceeds the maximum of 2147483647 ms',
        at="timeout:",
    ),
    bad(
        "api-collection-without-json-diff",
        frontmatter(
            *api(
                "  url: https://example.com/tasks",
                "  change-detection:",
                "    collection:",
                "      path: $.tasks",
                "      key: id",
            )
        ),
        "watch.change-detection.collection",
        "change-detection.collection requires strategy: json-diff",
        at="collection:",
    ),
    bad(
        "api-unknown-strategy",
        frontmatter(*api("  url: https://example.com", "  change-detection:", "    strategy: xml")),
        "watch.change-detection.strategy",
        "expected one of 'json-diff', 'text-diff' or 'status-code'",
        at="strategy:",
    ),
    bad(
        "api-bearer-without-token",
        frontmatter(*api("  url: https://example.com", "  auth:", "    type: bearer")),
        "watch.auth",
        "Bearer auth requires a token. Add auth.token or auth.token-env",
        at="auth:",
    ),
    bad(
        "api-composite-with-collection",
        frontmatter(
            *api(
                "  change-detection:",
                "    strategy: json-diff",
                "    collection: {path: items, key: id}",
                "    composite: {object-key: k, parts: [{id: a, url: 'https://example.com'}]}",
            )
        ),
        "watch.change-detection.composite",
        "change-detection.composite and change-detection.collection are mutually exclusive",
        at="composite:",
    ),
    bad(
        "api-header-not-string",
        frontmatter(*api("  url: https://example.com", "  headers:", "    X-Retries: 3")),
        "watch.headers.X-Retries",
        "expected a string",
        at="X-Retries:",
    ),
    # ------------------------------------------------------------ command-poll
    bad(
        "command-bare-string",
        frontmatter(*cmd("  command: git fetch && git status")),
        "watch.command",
        "watch.command: must be a non-empty array of strings (argv form",
        'To run it through a shell, write ["sh", "-c", "git fetch && git status"].',
        at="command:",
    ),
    bad(
        "command-empty-list",
        frontmatter(*cmd("  command: []")),
        "watch.command",
        "watch.command: must be a non-empty array of strings",
        at="command:",
    ),
    bad(
        "command-unknown-change-detection-key",
        frontmatter(
            *cmd("  command: [git, status]", "  change-detection:", "    strategy: text-diff"),
            "    colection: {path: a, key: id}",
        ),
        "watch.change-detection.colection",
        "is not a known key in this block",
        at="colection:",
    ),
    bad(
        "command-ignore-paths-without-json-diff",
        frontmatter(
            *cmd("  command: [cat, a.json]", "  change-detection:", "    ignore-paths: ['$.at']")
        ),
        "watch.change-detection.ignore-paths",
        "change-detection.ignore-paths requires strategy: json-diff",
        at="ignore-paths:",
    ),
    bad(
        "command-collection-bad-path",
        frontmatter(
            *cmd(
                "  command: [cat, a.json]",
                "  change-detection:",
                "    strategy: json-diff",
                "    collection:",
                "      path: '$tasks'",
                "      key: id",
            )
        ),
        "watch.change-detection.collection.path",
        'must be "$", start with "$." or be a bare dotted path',
        at="path:",
    ),
    bad(
        "command-env-not-string",
        frontmatter(*cmd("  command: [env]", "  env:", "    DEBUG: true")),
        "watch.env.DEBUG",
        "expected a string",
        at="DEBUG:",
    ),
    # ------------------------------------------------------------ schedule
    bad(
        "schedule-bad-cron",
        frontmatter("watch:", "  type: schedule", "  cron: '0 25 * * *'"),
        "watch.cron",
        '"0 25 * * *" is not a valid cron expression',
        "hour",
        at="cron:",
    ),
    bad(
        "schedule-six-field-cron",
        frontmatter("watch:", "  type: schedule", "  cron: '0 0 9 * * 1'"),
        "watch.cron",
        "Must be a five-field cron expression",
        at="cron:",
    ),
    bad(
        "schedule-missing-cron",
        frontmatter("watch:", "  type: schedule", "  label: Standup"),
        "watch.cron",
        "is required",
        at="watch:",
    ),
    bad(
        "schedule-bad-timezone",
        frontmatter("watch:", "  type: schedule", "  cron: '0 9 * * 1-5'", "  timezone: X"),
        "watch.timezone",
        'watch.timezone: "X" is not a valid IANA time zone name (e.g. "America/New_York", "UTC").',
        at="timezone:",
        folder=True,
    ),
    # ------------------------------------------------------------ incoming-changes
    bad(
        "incoming-paths-string",
        frontmatter("watch:", "  type: incoming-changes", "  paths: docs/**"),
        "watch.paths",
        "watch.paths: must be an array of strings",
        "paths: ['docs/**']",
        at="paths:",
    ),
    bad(
        "incoming-paths-empty",
        frontmatter("watch:", "  type: incoming-changes", "  paths: []"),
        "watch.paths",
        "must contain at least one git pathspec",
        at="paths:",
    ),
    bad(
        "incoming-branch-empty",
        frontmatter("watch:", "  type: incoming-changes", "  paths: [src]", "  branch: ''"),
        "watch.branch",
        "must not be empty",
        at="branch:",
    ),
)

VALID_MONITORS = {
    "good-schedule": frontmatter(
        "name: Standup", *SCHEDULE_WATCH, "urgency: normal..high", body="Post the notes.\n"
    ),
    "good-files": frontmatter(
        "watch:",
        "  type: file-fingerprint",
        "  globs: ['docs/**/*.md']",
        "notify: {strategy: debounce, settle-for: 30s}",
    ),
}


def assert_reported(case: Bad, error: str) -> None:
    """``error`` names the case's field, carries its phrases and points at its line."""
    if case.field is not None:
        assert re.search(rf"(?:^|; ){re.escape(case.field)}: ", error), (case.field, error)
    for phrase in case.phrases:
        assert phrase in error, (phrase, error)
    if case.at is not None:
        line = line_of(case.content, case.at)
        assert re.search(rf"\bline {line}\)", error), (f"line {line}", error)


def test_cases_are_distinct() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    contents = [case.content for case in CASES]
    assert len(contents) == len(set(contents))
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_malformed_monitor_is_reported(
    case: Bad, monitors_dir: Path, validate_json: Validate
) -> None:
    path = write_monitor(monitors_dir, case.id, case.content, folder=case.folder)
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert (report["valid"], report["invalid"], report["monitors"]) == (0, 1, [])
    [entry] = report["errors"]
    assert entry["filePath"] == case.id  # validate keys each error line by monitor id
    assert entry["paths"] == [str(path)]
    assert_reported(case, entry["error"])


def test_every_bad_file_is_reported_and_the_valid_ones_still_pass(
    monitors_dir: Path, validate_json: Validate
) -> None:
    for case in CASES:
        write_monitor(monitors_dir, case.id, case.content, folder=case.folder)
    for monitor_id, text in VALID_MONITORS.items():
        write_monitor(monitors_dir, monitor_id, text, folder=monitor_id == "good-files")
    # Two more kinds of bad file that are not plain text: a dangling symlink and a
    # pair of monitors sharing an id.
    os.symlink(monitors_dir / "nowhere.md", monitors_dir / "dangling.md")
    write_monitor(monitors_dir, "twin", frontmatter(*SCHEDULE_WATCH))
    write_monitor(monitors_dir, "twin", frontmatter(*SCHEDULE_WATCH), folder=True)

    code, report = validate_json(monitors_dir)

    assert code == 1
    assert sorted(m["id"] for m in report["monitors"]) == sorted(VALID_MONITORS)
    assert report["valid"] == 2
    errors = errors_by_id(report)
    assert set(errors) == {case.id for case in CASES} | {"dangling", "twin"}
    assert report["invalid"] == len(CASES) + 2
    for case in CASES:
        assert_reported(case, errors[case.id])
    assert "Failed to read file" in errors["dangling"]
    assert 'Duplicate monitor id "twin"' in errors["twin"]
    assert [dup["id"] for dup in report["duplicateIds"]] == ["twin"]


def test_text_format_reports_every_invalid_monitor(monitors_dir: Path, run_cli: Run) -> None:
    chosen = CASES[:5]
    for case in chosen:
        write_monitor(monitors_dir, case.id, case.content, folder=case.folder)
    result = run_cli("validate", str(monitors_dir))
    assert result.code == 1
    assert f"Invalid monitors: {len(chosen)}" in result.out
    for case in chosen:
        assert f"  {case.id}: " in result.out


# ---------------------------------------------------------------- files that cannot be read


def test_unreadable_file(
    monitors_dir: Path, validate_json: Validate, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_monitor(monitors_dir, "locked", frontmatter(*SCHEDULE_WATCH))
    real_open = os.open

    def mode_000(file: Any, *args: Any, **kwargs: Any) -> Any:
        # What the kernel answers a non-root reader of a mode-000 file; root, as in CI,
        # would read through the mode, so the refusal is simulated at the open call.
        if isinstance(file, str | os.PathLike) and os.fspath(file) == str(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", mode_000)
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert errors_by_id(report) == {"locked": "Failed to read file: Permission denied"}


def test_read_error_is_reported_even_as_root(
    monitors_dir: Path, validate_json: Validate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same refusal as above, simulated, so the path is covered when run as root."""
    from agentmonitors.monitor import parse

    locked = write_monitor(monitors_dir, "locked", frontmatter(*SCHEDULE_WATCH))
    write_monitor(monitors_dir, "open", frontmatter(*SCHEDULE_WATCH))
    real_read = parse.read_monitor_text

    def refuse(file_path: str) -> str:
        if file_path == str(locked):
            raise PermissionError(13, "Permission denied", file_path)
        return real_read(file_path)

    monkeypatch.setattr(parse, "read_monitor_text", refuse)
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert [m["id"] for m in report["monitors"]] == ["open"]
    assert errors_by_id(report) == {"locked": "Failed to read file: Permission denied"}


def test_dangling_symlink_is_an_unreadable_monitor(
    monitors_dir: Path, validate_json: Validate
) -> None:
    os.symlink(monitors_dir / "missing-target.md", monitors_dir / "dangling.md")
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert errors_by_id(report) == {"dangling": "Failed to read file: No such file or directory"}


# ---------------------------------------------------------------- ids


def test_duplicate_ids_flat_and_folder(monitors_dir: Path, validate_json: Validate) -> None:
    flat = write_monitor(monitors_dir, "x", frontmatter(*SCHEDULE_WATCH))
    folder = write_monitor(monitors_dir, "x", frontmatter(*SCHEDULE_WATCH), folder=True)
    write_monitor(monitors_dir, "y", frontmatter(*SCHEDULE_WATCH))
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert report["duplicateIds"] == [{"id": "x", "filePaths": [str(flat), str(folder)]}]
    assert [m["id"] for m in report["monitors"]] == ["y"]
    assert (report["valid"], report["invalid"]) == (1, 1)
    [entry] = report["errors"]
    assert entry["filePath"] == "x"
    assert entry["error"] == (
        'Duplicate monitor id "x" -- ids are derived from folder names and must be unique '
        "within a tree"
    )
    assert entry["paths"] == [str(flat), str(folder)]


def test_duplicate_ids_in_nested_folders(monitors_dir: Path, validate_json: Validate) -> None:
    first = write_monitor(
        monitors_dir / "team-a", "deploys", frontmatter(*SCHEDULE_WATCH), folder=True
    )
    second = write_monitor(
        monitors_dir / "team-b", "deploys", frontmatter(*SCHEDULE_WATCH), folder=True
    )
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert report["duplicateIds"] == [{"id": "deploys", "filePaths": [str(first), str(second)]}]
    assert report["valid"] == 0
    assert 'Duplicate monitor id "deploys"' in errors_by_id(report)["deploys"]


def test_duplicate_of_an_unparseable_file_is_not_a_duplicate(
    monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(monitors_dir, "x", frontmatter(*SCHEDULE_WATCH))
    write_monitor(monitors_dir, "x", "---\nwatch: [\n---\n", folder=True)
    code, report = validate_json(monitors_dir)
    assert code == 1
    assert report["duplicateIds"] == []
    assert (report["valid"], report["invalid"]) == (1, 1)
    assert "Failed to parse YAML frontmatter" in errors_by_id(report)["x"]


def test_file_whose_id_cannot_be_derived(tmp_path: Path, validate_json: Validate) -> None:
    path = tmp_path / ".hidden.md"
    path.write_text(frontmatter(*SCHEDULE_WATCH))
    code, report = validate_json(path)
    assert code == 1
    # With no id, the error is keyed by the file path.
    assert errors_by_id(report) == {str(path): "Could not derive a monitor id from the file path"}


# ---------------------------------------------------------------- paths that do not exist


def test_missing_directory(tmp_path: Path, run_cli: Run) -> None:
    missing = tmp_path / "no-such-monitors"
    result = run_cli("validate", str(missing), "--format", "json")
    assert result.code == 1
    assert result.json() == {"error": f'path "{missing}" does not exist'}
    text = run_cli("validate", str(missing))
    assert text.code == 1
    assert text.out == ""
    assert f'error: path "{missing}" does not exist' in text.err


def test_missing_directory_next_to_a_real_one(
    tmp_path: Path, monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(monitors_dir, "fine", frontmatter(*SCHEDULE_WATCH))
    missing = tmp_path / "gone"
    code, report = validate_json(monitors_dir, missing)
    assert code == 1
    assert report["valid"] == 1
    assert report["error"] == f'path "{missing}" does not exist'


# ---------------------------------------------------------------- several problems at once


def test_frontmatter_and_source_problems_in_one_run(
    monitors_dir: Path, validate_json: Validate
) -> None:
    text = frontmatter(
        "name: ''",
        "urgency: critical",
        "watch:",
        "  type: api-poll",
        "  method: PUT",
        "  timeout: 0s",
    )
    write_monitor(monitors_dir, "many", text)
    code, report = validate_json(monitors_dir)
    assert code == 1
    error = errors_by_id(report)["many"]
    parts = error.split("; ")
    assert [part.split(":", 1)[0] for part in parts] == [
        "name",
        "urgency",
        "watch.url",
        "watch.method",
        "watch.timeout",
    ]
    assert f"line {line_of(text, 'method:')})" in error
    assert f"line {line_of(text, 'timeout:')})" in error


def test_unknown_source_is_reported_alongside_other_frontmatter_errors(
    monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(
        monitors_dir, "both", frontmatter("urgency: critical", "watch:", "  type: rss-feed")
    )
    _, report = validate_json(monitors_dir)
    error = errors_by_id(report)["both"]
    assert URGENCY_BOUNDS in error
    assert 'Unknown source "rss-feed"' in error


# ---------------------------------------------------------------- a trailing newline slips past


TRAILING_NEWLINE_CASES = (
    pytest.param(
        frontmatter(*SCHEDULE_WATCH, "notify:", "  strategy: debounce", '  settle-for: "5m\\n"'),
        "notify.settle-for",
        DURATION_MESSAGE,
        id="settle-for-with-newline",
    ),
    pytest.param(
        frontmatter(
            *SCHEDULE_WATCH, "notify:", "  strategy: throttle", "  suppress-for: |", "    1h"
        ),
        "notify.suppress-for",
        DURATION_MESSAGE,
        id="suppress-for-block-scalar",
    ),
    pytest.param(
        frontmatter(*ff("  globs: '*.md'", '  interval: "30s\\n"')),
        "watch.interval",
        DURATION_MESSAGE,
        id="interval-with-newline",
    ),
    pytest.param(
        frontmatter(*api("  url: https://example.com", '  timeout: "30s\\n"')),
        "watch.timeout",
        "Invalid timeout",
        id="timeout-with-newline",
    ),
    pytest.param(
        frontmatter("watch:", '  type: "schedule\\n"', "  cron: '0 9 * * *'"),
        "watch.type",
        "watch.type must be kebab-case",
        id="type-with-newline",
    ),
)


@pytest.mark.parametrize(("content", "field", "phrase"), TRAILING_NEWLINE_CASES)
def test_value_with_trailing_newline_is_rejected(
    content: str, field: str, phrase: str, monitors_dir: Path, validate_json: Validate
) -> None:
    write_monitor(monitors_dir, "newline", content)
    code, report = validate_json(monitors_dir)
    assert code == 1
    error = errors_by_id(report)["newline"]
    assert error.startswith(f"{field}: {phrase}"), error

"""Parse one MONITOR.md (folder form) or ``<id>.md`` (flat form) into a definition."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from agentmonitors.monitor.frontmatter import (
    FrontmatterError,
    YamlLines,
    load_frontmatter,
    split_document,
)
from agentmonitors.monitor.issues import LineLookup, describe_value, issues_from_pydantic
from agentmonitors.monitor.model import (
    DERIVE_KEYS,
    NOTIFY_KEYS,
    PAYLOAD_KEYS,
    SHAPE_KEYS,
    TOP_LEVEL_KEYS,
    TRANSFORM_KEYS,
    Frontmatter,
    MonitorDefinition,
)

FOLDER_MONITOR_FILE = "MONITOR.md"
ID_ERROR = "Could not derive a monitor id from the file path"


@dataclass(frozen=True)
class ParseFailure:
    """A file that is not a usable monitor, with the author-facing reason."""

    file_path: str
    error: str
    id: str | None = None
    scope: Literal["project", "user"] | None = None
    # The authored watch block when the frontmatter parsed but failed its checks, so
    # validate can still check it against its source and report every problem at once.
    watch_raw: dict[str, Any] | None = field(default=None, compare=False)
    lines: LineLookup | None = field(default=None, compare=False, repr=False)


ParseOutcome = MonitorDefinition | ParseFailure


def monitor_id_for(file_path: str) -> str | None:
    """``<id>/MONITOR.md`` → ``id``; ``<id>.md`` → ``id``; None when no id can be had."""
    base = os.path.basename(file_path)
    if base == FOLDER_MONITOR_FILE:
        candidate = os.path.basename(os.path.dirname(os.path.abspath(file_path)))
    else:
        candidate = os.path.splitext(base)[0]
    if not candidate or candidate.startswith("."):
        return None
    return candidate


def nearest_key_hint(key: str, known: Iterable[str]) -> str:
    choices = list(known)
    close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    if close:
        return f'did you mean "{close[0]}"?'
    ranked = sorted(choices, key=lambda choice: -difflib.SequenceMatcher(None, key, choice).ratio())
    return f'the nearest known key is "{ranked[0]}"' if ranked else "no keys are known here"


def unknown_key_warnings(
    data: Mapping[str, Any], known: Iterable[str], where: str, lines: LineLookup | None
) -> list[str]:
    known_keys = tuple(known)
    warnings = []
    for key in data:
        if key in known_keys:
            continue
        dotted = f"{where}.{key}" if where else str(key)
        path = tuple(int(part) if part.isdigit() else part for part in where.split(".") if part)
        line = lines((*path, key)) if lines is not None else None
        at = f" (line {line})" if line is not None else ""
        warnings.append(
            f'unknown key "{dotted}" is ignored — {nearest_key_hint(str(key), known_keys)}{at}'
        )
    return warnings


def _frontmatter_warnings(data: Mapping[str, Any], lines: YamlLines, monitor_id: str) -> list[str]:
    warnings: list[str] = []
    for key in data:
        if key == "id":
            line = lines(("id",))
            at = f" (line {line})" if line is not None else ""
            warnings.append(
                f'"id" is ignored: a monitor\'s id comes from its file or folder name '
                f'("{monitor_id}"){at}'
            )
    top = {key: value for key, value in data.items() if key != "id"}
    warnings += unknown_key_warnings(top, TOP_LEVEL_KEYS, "", lines)
    notify = data.get("notify")
    if isinstance(notify, Mapping) and notify.get("strategy") in NOTIFY_KEYS:
        warnings += unknown_key_warnings(notify, NOTIFY_KEYS[notify["strategy"]], "notify", lines)
    shape = data.get("shape")
    if isinstance(shape, Mapping):
        warnings += unknown_key_warnings(shape, SHAPE_KEYS, "shape", lines)
        derive = shape.get("derive")
        if isinstance(derive, list):
            for index, rule in enumerate(derive):
                if isinstance(rule, Mapping):
                    warnings += unknown_key_warnings(
                        rule, DERIVE_KEYS, f"shape.derive.{index}", lines
                    )
    payload = data.get("payload")
    if isinstance(payload, Mapping):
        warnings += unknown_key_warnings(payload, PAYLOAD_KEYS, "payload", lines)
        transform = payload.get("transform")
        if isinstance(transform, Mapping):
            warnings += unknown_key_warnings(transform, TRANSFORM_KEYS, "payload.transform", lines)
    return warnings


def _legacy_shape_hint(data: Mapping[str, Any]) -> str | None:
    """Frontmatter written in the old top-level ``source:`` + ``scope:`` shape."""
    source = data.get("source")
    if "watch" in data or "scope" not in data or not isinstance(source, str) or not source:
        return None
    return (
        "did you mean to use the current watch shape? Move source/scope into watch:, "
        f"for example: watch: {{ type: {source}, ... }}"
    )


def parse_monitor(
    text: str, file_path: str, scope: Literal["project", "user"] | None = None
) -> ParseOutcome:
    """Parse a monitor's text. ``file_path`` decides the id and is reported as absolute."""
    path = os.path.abspath(file_path)
    monitor_id = monitor_id_for(path)
    if monitor_id is None:
        return ParseFailure(path, ID_ERROR, None, scope)
    try:
        split = split_document(text)
        loaded = load_frontmatter(split)
    except FrontmatterError as error:
        return ParseFailure(path, str(error), monitor_id, scope)
    data = loaded.data
    if not isinstance(data, Mapping):
        return ParseFailure(
            path,
            "Failed to parse YAML frontmatter: expected a mapping of keys such as "
            f"watch: and urgency:, found {describe_value(data)}",
            monitor_id,
            scope,
        )
    non_string_keys = [key for key in data if not isinstance(key, str)]
    if non_string_keys:
        return ParseFailure(
            path,
            f"frontmatter keys must be strings, found {describe_value(non_string_keys[0])}",
            monitor_id,
            scope,
        )
    try:
        frontmatter = Frontmatter.model_validate(data)
    except ValidationError as error:
        messages = [issue.render(lines=loaded.lines) for issue in issues_from_pydantic(error, data)]
        if split.yaml_text is None and "watch" not in data:
            messages = [
                "watch: is required — the file has no frontmatter; it must start with a '---' "
                "line, then YAML with a watch: block, then a closing '---' line"
            ]
        hint = _legacy_shape_hint(data)
        if hint is not None:
            messages.append(hint)
        watch = data.get("watch")
        return ParseFailure(
            path,
            "; ".join(messages),
            monitor_id,
            scope,
            dict(watch) if isinstance(watch, Mapping) else None,
            loaded.lines,
        )
    warnings = _frontmatter_warnings(data, loaded.lines, monitor_id)
    watch_raw = dict(data["watch"])
    return MonitorDefinition(
        id=monitor_id,
        file_path=path,
        frontmatter=frontmatter,
        body=split.body,
        watch_raw=watch_raw,
        scope=scope,
        warnings=tuple(warnings),
        lines=loaded.lines,
    )


def read_monitor_text(file_path: str) -> str:
    """The file's text; raises ``OSError`` or ``UnicodeDecodeError``."""
    # newline="" keeps CRLF bodies byte-for-byte as the author wrote them.
    with open(file_path, encoding="utf-8", newline="") as handle:
        return handle.read()


def parse_monitor_file(
    file_path: str, scope: Literal["project", "user"] | None = None
) -> ParseOutcome:
    path = os.path.abspath(file_path)
    try:
        text = read_monitor_text(path)
    except UnicodeDecodeError as error:
        return ParseFailure(
            path,
            f"Failed to read file: not valid UTF-8 (byte {error.start})",
            monitor_id_for(path),
            scope,
        )
    except OSError as error:
        reason = error.strerror or str(error)
        return ParseFailure(path, f"Failed to read file: {reason}", monitor_id_for(path), scope)
    return parse_monitor(text, path, scope)

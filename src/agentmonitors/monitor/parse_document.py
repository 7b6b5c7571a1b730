"""Parsing a MONITOR.md the compiled-definition cache could not answer.

Split, YAML, then the pydantic model (``monitor/model.py``), its unknown-key warnings
and the legacy-shape hint. ``monitor/parse.py`` imports this once, lazily, so a tick
that reads every definition from the cache never loads pydantic or ruamel
(docs/architecture.md, "Compiled definitions").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from agentmonitors.monitor.frontmatter import FrontmatterError, split_document
from agentmonitors.monitor.frontmatter_yaml import load_frontmatter
from agentmonitors.monitor.issues import LineLookup, describe_value, issues_from_pydantic
from agentmonitors.monitor.model import Frontmatter
from agentmonitors.monitor.parse import ID_ERROR, ParseFailure, ParseOutcome, monitor_id_for
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.monitor.unknown_keys import model_unknown_key_warnings


def parse_monitor_text(
    text: str, file_path: str, scope: Literal["project", "user"] | None
) -> ParseOutcome:
    """Split, load and validate one monitor's text (``monitor.parse.parse_monitor``
    wraps it so a parser blowing up fails this file only)."""
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
            tuple(_frontmatter_warnings(data, loaded.lines, monitor_id)),
        )
    warnings = _frontmatter_warnings(data, loaded.lines, monitor_id)
    watch_raw = dict(data["watch"])
    return MonitorDefinition(
        id=monitor_id,
        file_path=path,
        frontmatter=frontmatter.to_policy(),
        body=split.body,
        watch_raw=watch_raw,
        scope=scope,
        warnings=tuple(warnings),
        lines=loaded.lines,
    )


def _frontmatter_warnings(data: Mapping[str, Any], lines: LineLookup, monitor_id: str) -> list[str]:
    """The frontmatter's own unknown keys, at any depth; ``watch`` is its source's to check."""
    warnings: list[str] = []
    if "id" in data:
        line = lines(("id",))
        at = f" (line {line})" if line is not None else ""
        warnings.append(
            f'"id" is ignored: a monitor\'s id comes from its file or folder name '
            f'("{monitor_id}"){at}'
        )
    warnings += model_unknown_key_warnings(data, Frontmatter, (), lines, skip=("id", "watch"))
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

"""Parse one MONITOR.md (folder form) or ``<id>.md`` (flat form) into a definition."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.frontmatter import (
    MAX_NESTING,
    FrontmatterError,
    load_frontmatter,
    split_document,
)
from agentmonitors.monitor.issues import LineLookup, describe_value
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.untrusted import MONITOR_FILE_CAP, read_bounded

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
    # Unknown-key warnings are shown next to the errors: a typo is often their cause.
    warnings: tuple[str, ...] = field(default=(), compare=False)


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


def _frontmatter_warnings(data: Mapping[str, Any], lines: LineLookup, monitor_id: str) -> list[str]:
    """The frontmatter's own unknown keys, at any depth; ``watch`` is its source's to check."""
    from agentmonitors.monitor.model import Frontmatter
    from agentmonitors.monitor.unknown_keys import model_unknown_key_warnings

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


def parse_monitor(
    text: str, file_path: str, scope: Literal["project", "user"] | None = None
) -> ParseOutcome:
    """Parse a monitor's text. ``file_path`` decides the id and is reported as absolute.

    A parser that blows up on hostile input (recursion, memory) fails this file only:
    the scan of every other monitor, and the daemon's start, go on.
    """
    try:
        return _parse_monitor(text, file_path, scope)
    except (RecursionError, MemoryError) as error:
        path = os.path.abspath(file_path)
        reason = (
            f"nested deeper than {MAX_NESTING} levels"
            if isinstance(error, RecursionError)
            else "too large to parse"
        )
        return ParseFailure(path, f"Failed to parse: {reason}", monitor_id_for(path), scope)


def _parse_monitor(
    text: str, file_path: str, scope: Literal["project", "user"] | None
) -> ParseOutcome:
    # Here, not at the top: a definition restored from the compiled cache is read
    # without pydantic (docs/architecture.md, "Compiled definitions").
    from pydantic import ValidationError

    from agentmonitors.monitor.issues import issues_from_pydantic
    from agentmonitors.monitor.model import Frontmatter

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


def read_monitor_text(file_path: str) -> str:
    """The file's text; raises ``OSError`` or ``UnicodeDecodeError``.

    Only a regular file of at most :data:`MONITOR_FILE_CAP` bytes is read: a FIFO, a
    device or an oversized file is refused with an ``OSError`` saying so
    (``untrusted.read_bounded``). Decoding the bytes keeps CRLF bodies byte-for-byte.
    """
    return read_bounded(file_path, MONITOR_FILE_CAP).decode("utf-8")


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

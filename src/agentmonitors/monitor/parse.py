"""Parse one MONITOR.md (folder form) or ``<id>.md`` (flat form) into a definition."""

from __future__ import annotations

import os

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.frontmatter import MAX_NESTING
from agentmonitors.monitor.issues import LineLookup
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.untrusted import MONITOR_FILE_CAP, read_bounded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

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
    # Lazy: a definition restored from the compiled cache is read without pydantic or
    # ruamel (docs/architecture.md, "Compiled definitions").
    from agentmonitors.monitor.parse_document import parse_monitor_text

    return parse_monitor_text(text, file_path, scope)


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

"""Splitting a MONITOR.md into frontmatter and body.

The split is done by hand (a ``---`` line, the YAML, a closing ``---`` line) so the
body stays byte-for-byte what the author wrote; where the block starts and ends is
declared once, in ``fastpath/scalar_frontmatter.py``, which the enable-file reader
shares. Loading the YAML is
``monitor/frontmatter_yaml.py``'s: this module stays on the standard library because
every tick imports it, and ruamel.yaml loads only for a file the compiled-definition
cache cannot answer (docs/architecture.md "Speed").
"""

from __future__ import annotations

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.fastpath.scalar_frontmatter import BOM, closing_delimiter, is_delimiter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class FrontmatterError(ValueError):
    """The frontmatter could not be split or parsed; the message is author-facing."""


@dataclass(frozen=True)
class SplitDocument:
    yaml_text: str | None
    body: str
    # 1-based file line of the first YAML line (the line after the opening ``---``).
    yaml_first_line: int


def split_document(text: str) -> SplitDocument:
    """Separate the leading ``---`` frontmatter block from the Markdown body."""
    text = text.removeprefix(BOM)
    lines = text.splitlines(keepends=True)
    if not lines or not is_delimiter(lines[0]):
        return SplitDocument(yaml_text=None, body=text, yaml_first_line=1)
    end = closing_delimiter(lines)
    if end is not None:
        return SplitDocument(
            yaml_text="".join(lines[1:end]),
            body="".join(lines[end + 1 :]),
            yaml_first_line=2,
        )
    raise FrontmatterError(
        "Failed to parse YAML frontmatter: the opening '---' on line 1 has no closing '---' line"
    )


MAX_NESTING = 64
"""Deepest mapping or list nesting a frontmatter may have. Validation, the compiled
cache and the JSON output all recurse per level; real monitors use fewer than ten."""


def nesting_exceeds(data: Any, limit: int) -> bool:
    """Whether ``data`` holds mappings or lists nested deeper than ``limit`` (iterative,
    so the check itself cannot overflow; an alias repeating a block is visited again only
    when it sits deeper than before)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    seen: dict[int, int] = {}
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        if seen.get(id(value), 0) >= depth:
            continue
        seen[id(value)] = depth
        pending.extend((child, depth + 1) for child in children)
    return False

"""The enable file's frontmatter read with string methods, not a YAML parser.

Every hook reads ``.claude/agentmonitors.local.md``; ruamel.yaml costs a hook far more
than the rest of its work (see ``agentmonitors.fastpath``). The file only ever holds
scalars we wrote, so ``key: value`` lines are enough; tests/fastpath/test_scalar_frontmatter.py
feeds the same texts to ruamel and compares.
"""

from __future__ import annotations

# The frontmatter's shape, declared once: an optional BOM, a first line that is ``---``
# (trailing whitespace allowed), the YAML, then the next such line. Both readers,
# ``monitor/frontmatter.py`` (a MONITOR.md, for ruamel.yaml) and this module's (the enable
# file, with string methods), find the block with these two functions.
BOM = "\ufeff"


def is_delimiter(line: str) -> bool:
    """Whether ``line`` (with or without its line ending) opens or closes a frontmatter."""
    return line.rstrip() == "---"


def closing_delimiter(lines: list[str]) -> int | None:
    """The index of the line closing the frontmatter ``lines[0]`` opens; None when
    ``lines[0]`` opens none or nothing closes it (callers tell the two apart)."""
    if not lines or not is_delimiter(lines[0]):
        return None
    for index in range(1, len(lines)):
        if is_delimiter(lines[index]):
            return index
    return None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


# YAML 1.2's core schema spells each boolean three ways (and no others: ``yes``/``on``
# stay strings).
TRUE_SPELLINGS = frozenset(("true", "True", "TRUE"))
FALSE_SPELLINGS = frozenset(("false", "False", "FALSE"))


def _parse_scalar(raw: str) -> str | bool | int | float:
    if raw in TRUE_SPELLINGS:
        return True
    if raw in FALSE_SPELLINGS:
        return False
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        number = float(raw)
    except ValueError:
        return raw
    # "nan" and "inf" stay text; x - x is 0 only for a finite x (no math import).
    return number if number - number == 0 else raw


def parse_scalar_frontmatter(text: str) -> dict[str, str | bool | int | float] | None:
    """Scalar ``key: value`` lines between the leading ``---`` pair, or None.

    Deliberately not YAML: the file only ever holds scalars we wrote, and a hook must
    not pay for a YAML parser. Tolerates a BOM, CRLF, trailing whitespace, quoted
    values and ``#`` comments after a value.
    """
    lines = text.removeprefix(BOM).splitlines()
    end = closing_delimiter(lines)
    if end is None:
        return None
    data: dict[str, str | bool | int | float] = {}
    for line in lines[1:end]:
        key, sep, rest = line.partition(":")
        if not sep:
            continue
        value = rest.strip()
        if value and value[0] not in "\"'" and " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        quoted = _unquote(value)
        data[key.strip()] = quoted if quoted != value else _parse_scalar(value)
    return data

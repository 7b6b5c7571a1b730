"""The enable file's frontmatter read with string methods, not a YAML parser.

Every hook reads ``.claude/agentmonitors.local.md``; ruamel.yaml costs a hook far more
than the rest of its work (see ``agentmonitors.fastpath``). The file only ever holds
scalars we wrote, so ``key: value`` lines are enough; tests/fastpath/test_scalar_frontmatter.py
feeds the same texts to ruamel and compares.
"""

from __future__ import annotations


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
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        return None
    data: dict[str, str | bool | int | float] = {}
    for line in lines[1:]:
        if line.rstrip() == "---":
            return data
        key, sep, rest = line.partition(":")
        if not sep:
            continue
        value = rest.strip()
        if value and value[0] not in "\"'" and " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        quoted = _unquote(value)
        data[key.strip()] = quoted if quoted != value else _parse_scalar(value)
    return None

"""Glob segments compiled to regular expressions without ``wcmatch``, braces without ``bracex``.

file-fingerprint matches each folder name against one segment of a pattern. A segment
made only of ``*``, ``?`` and plain characters (most of them: ``*.md``) is compiled here
directly; anything else (``[..]``, escapes) by ``wcmatch.fnmatch``, imported then. A
pattern without braces or escapes is its own only alternative; anything else is expanded
by ``bracex``. Both libraries cost more to import than a small tree's walk.
tests/fastpath/test_globs.py holds each function equal to the library it replaces.
"""

from __future__ import annotations

import re

# A pattern's braces may expand to at most this many alternatives.
MAX_BRACE_EXPANSIONS = 1000

# What a compiled segment is: a plain name, a regex over one name, or ``**``.
LITERAL = 0
MAGIC = 1
GLOBSTAR = 2
_MAGIC_CHARS = frozenset("*?[\\")

Segment = tuple[int, "str | re.Pattern[str] | None"]


def is_magic(segment: str) -> bool:
    """Whether ``segment`` holds a wildcard, a bracket or an escape."""
    return not _MAGIC_CHARS.isdisjoint(segment)


def compile_segment(segment: str) -> Segment:
    """One pattern segment as ``(kind, value)``: what ``wcmatch.fnmatch`` would match."""
    if segment == "**":
        return (GLOBSTAR, None)
    if not is_magic(segment):
        return (LITERAL, segment)
    if "[" not in segment and "\\" not in segment:
        return (MAGIC, re.compile(wildcard_regex(segment), re.DOTALL))
    # Lazy: wcmatch costs more than a small tree's walk; only brackets and escapes get here.
    from wcmatch import fnmatch

    include, _exclude = fnmatch.translate(segment, flags=0)
    return (MAGIC, re.compile(include[0]))


def wildcard_regex(segment: str) -> str:
    """The whole-name regex of a segment of ``*``, ``?`` and plain characters.

    ``*`` is any run of characters and ``?`` any one, except that a name starting with
    ``.`` matches only a segment that starts with a literal ``.``. Each piece between
    stars but the last is matched at its first occurrence and never retried (an atomic
    group), which cannot lose a match and keeps ``*a*a*a*b`` linear on a long name.
    The end is ``$``, as wcmatch has it (a name's one trailing newline is let through).
    """
    pieces = [
        "".join("." if char == "?" else re.escape(char) for char in piece)
        for piece in segment.split("*")
    ]
    lead = "(?!\\.)" if segment[0] in "*?" else ""
    if len(pieces) == 1:
        return f"{lead}{pieces[0]}$"
    middle = "".join(f"(?>.*?{piece})" for piece in pieces[1:-1] if piece)
    return f"{lead}{pieces[0]}{middle}.*?{pieces[-1]}$"


def brace_alternatives(pattern: str) -> list[str]:
    """``pattern``'s brace alternatives (its escapes resolved), as ``bracex.expand`` gives
    them; ValueError past :data:`MAX_BRACE_EXPANSIONS`."""
    if "{" not in pattern and "\\" not in pattern:
        return [pattern] if pattern else []
    # Lazy: bracex is needed only for a pattern with braces or escapes.
    import bracex

    try:
        return list(bracex.expand(pattern, limit=MAX_BRACE_EXPANSIONS))
    except bracex.ExpansionLimitException as error:
        raise ValueError(
            f'glob "{pattern}" expands to more than {MAX_BRACE_EXPANSIONS} alternatives'
        ) from error

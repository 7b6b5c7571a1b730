"""Glob segments and braces compile without wcmatch and bracex when they can, identically."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import bracex
import pytest
from wcmatch import fnmatch

from agentmonitors.fastpath.globs import (
    MAX_BRACE_EXPANSIONS,
    brace_alternatives,
    compile_segment,
)
from agentmonitors.sources.file_globs import compile_patterns

SEGMENTS = [
    "*.txt",
    "*.md",
    "*",
    "?",
    "??",
    "*?",
    "?*",
    "a*",
    "*a",
    "*a*",
    "a**b",
    "a*b*c",
    "a?c",
    "a*?b",
    "*.tar.gz",
    ".*",
    ".x*",
    ".?",
    "x.*",
    "*.",
    "a+b(c)*",
    "a$^|*",
    "(x)*",
    "!x*",
    "+(a)*",
    "@(a|b)*",
    "#*~",
    "日本*",
    "*.é",
    "a b*",
    "{*",
    "*}",
]
NAMES = [
    "a",
    "b",
    "ab",
    "abc",
    "acb",
    "aXc",
    "abbc",
    "a.txt",
    "a.txt\n",
    "a\ntxt",
    ".txt",
    ".x",
    ".xy",
    "..",
    "x.",
    "x.y",
    "f.tar.gz",
    ".tar.gz",
    "a+b(c)",
    "a+b(c)d",
    "a$^|",
    "(x)",
    "!xy",
    "+(a)*",
    "@(a|b)",
    "#a~",
    "日本語",
    "x.é",
    "a bc",
    "{x",
    "x}",
    "a\nb",
]


@pytest.mark.parametrize("segment", SEGMENTS)
def test_a_wildcard_segment_matches_exactly_what_wcmatch_matches(segment: str) -> None:
    _kind, compiled = compile_segment(segment)
    assert isinstance(compiled, re.Pattern)
    reference = re.compile(fnmatch.translate(segment, flags=0)[0][0])
    for name in [*NAMES, segment, "." + segment, segment + "\n"]:
        expected = reference.match(name) is not None
        assert (compiled.match(name) is not None) == expected, (segment, name)


def test_many_stars_on_a_long_name_that_does_not_match_stay_fast() -> None:
    _, compiled = compile_segment("*a*a*a*a*a*a*b")
    assert isinstance(compiled, re.Pattern)
    started = time.perf_counter()
    assert compiled.match("a" * 255) is None
    assert time.perf_counter() - started < 0.5


def test_brackets_and_escapes_still_compile_as_wcmatch_does() -> None:
    for segment in ("[ab]*", "*[!a]", "a\\*b*"):
        _kind, compiled = compile_segment(segment)
        assert isinstance(compiled, re.Pattern)
        assert compiled.pattern == fnmatch.translate(segment, flags=0)[0][0]


@pytest.mark.parametrize(
    "pattern",
    [
        "src/**/*.txt",
        "a,b/*.md",
        "docs/*.{md,txt}",
        "{a}/x",
        "a\\*b/*",
        "a{b/*",
        "~/x/*.md",
        "",
        "a}b",
    ],
)
def test_brace_alternatives_are_bracex_s(pattern: str) -> None:
    assert brace_alternatives(pattern) == list(bracex.expand(pattern, limit=MAX_BRACE_EXPANSIONS))


def test_too_many_brace_alternatives_still_name_the_glob() -> None:
    pattern = "{a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}{a,b}"
    with pytest.raises(ValueError, match="expands to more than 1000 alternatives"):
        compile_patterns([pattern], "/base")


def test_plain_globs_compile_without_importing_wcmatch_or_bracex() -> None:
    code = (
        "import sys; from agentmonitors.sources.file_globs import compile_patterns;"
        " compile_patterns(['src/**/*.txt', 'docs/?/*.md', 'README.md'], '/base');"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('wcmatch', 'bracex')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"

"""The close name for a misspelt one: the "did you mean" of every validation message.

Standard library only, and ``difflib`` is imported on first use: a tick that finds
nothing misspelt never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

# How alike two names must be to suggest one for the other (difflib's ratio).
CLOSE_CUTOFF = 0.6


def _difflib() -> ModuleType:
    # Lazy: every parse and validation imports this; only a misspelt name needs difflib.
    import difflib

    return difflib


def close_name(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` closest to ``word`` when it is close enough, else None."""
    close = _difflib().get_close_matches(word, list(choices), n=1, cutoff=CLOSE_CUTOFF)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` Did you mean "x"?`` (with its leading space) for a close name, else ``""``."""
    close = close_name(word, choices)
    return f' Did you mean "{close}"?' if close is not None else ""


def nearest_name(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` most like ``word``, however far (None when there are none);
    the first of equally alike ones."""
    difflib = _difflib()
    ranked = sorted(
        choices, key=lambda choice: -difflib.SequenceMatcher(None, word, choice).ratio()
    )
    return ranked[0] if ranked else None

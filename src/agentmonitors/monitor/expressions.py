"""Parse checks for the CEL predicates and jq / CEL transforms a monitor may declare.

Both engines are imported lazily: most monitors use neither, and nothing on the hook
path ever needs them.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _first_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


@lru_cache(maxsize=512)
def cel_problem(expression: str) -> str | None:
    """The CEL parser's complaint about ``expression``, or None when it parses."""
    # Lazy: validating a monitor without a CEL expression never loads the CEL engine.
    import cel

    try:
        cel.compile(expression)
    except Exception as error:
        message = str(error)
        prefix = f"Failed to parse expression '{expression}': "
        if message.startswith(prefix):
            message = message[len(prefix) :]
        first = message.strip().splitlines()[0] if message.strip() else ""
        match = re.match(r"ERROR: <input>:(\d+):(\d+): (.*)", first)
        if match:
            first = f"{match.group(3)} (line {match.group(1)}, column {match.group(2)})"
        return first or "does not parse"
    return None


@lru_cache(maxsize=512)
def jq_problem(expression: str) -> str | None:
    """jq's compile error for ``expression``, or None when it compiles."""
    # Lazy: validating a monitor without a jq transform never loads jq.
    import jq

    try:
        jq.compile(expression)
    except Exception as error:
        lines = [line for line in str(error).splitlines() if line.startswith("jq: error")]
        first = lines[0].removeprefix("jq: error: ").rstrip(":") if lines else ""
        first = re.sub(r" at <top-level>, (line \d+, column \d+)$", r" (\1)", first)
        return first or _first_line(str(error)) or "does not compile"
    return None

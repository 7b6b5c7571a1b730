"""Compact JSON for the hook path and the daemon's wire, through the public ``json`` package.

``loads`` is ``json.loads`` and ``dumps`` is ``json.dumps(..., ensure_ascii=False,
separators=(",", ":"))``: one place for the settings every hook output and IPC line
uses. ``json`` is imported on first use, not at the top, so a module that merely
imports this one (the daemon client, the host adapters) does not pay for the
package and the ``re`` it brings (docs/architecture.md, "Speed"). Errors are the
``json`` package's: ``ValueError`` for bad text and ``RecursionError`` for nesting
deeper than the interpreter's stack, which callers reading untrusted input catch.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _float_constant(name: str) -> float:
    return float(name)  # "NaN", "Infinity", "-Infinity", as json.loads reads them


def loads(text: str, parse_constant: Callable[[str], Any] = _float_constant) -> Any:
    """``json.loads(text, parse_constant=parse_constant)``."""
    import json

    return json.loads(text, parse_constant=parse_constant)


def dumps(value: object, *, allow_nan: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=...)``."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)

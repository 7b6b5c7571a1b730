"""Compact JSON for the hook path, through the interpreter's C accelerator.

``json`` itself is a package of four modules, which a hook would load on every
prompt only to reach the C scanner and encoder in ``_json``. These two functions
call that accelerator directly, with exactly the settings ``json.loads`` and
``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` use, so the text is
byte-identical (tests compare them). An interpreter without the accelerator falls
back to the ``json`` package. Errors are ``ValueError``s, as from ``json``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"


def _float_constant(name: str) -> float:
    return float(name)  # "NaN", "Infinity", "-Infinity", as json.loads reads them


def _no_default(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _Context:
    """The attributes the C scanner reads from a ``JSONDecoder``."""

    __slots__ = (
        "memo",
        "object_hook",
        "object_pairs_hook",
        "parse_constant",
        "parse_float",
        "parse_int",
        "strict",
    )

    def __init__(self, parse_constant: Callable[[str], Any]) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = parse_constant
        self.memo: dict[str, str] = {}


try:
    import _json
except ImportError:  # an interpreter without the accelerator
    _json = None  # type: ignore[assignment]


def loads(text: str, parse_constant: Callable[[str], Any] = _float_constant) -> Any:
    """``json.loads(text, parse_constant=parse_constant)``."""
    if _json is None:
        import json

        return json.loads(text, parse_constant=parse_constant)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        scan = _json.make_scanner(_Context(parse_constant))  # type: ignore[arg-type]
        value, end = scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object, *, allow_nan: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=...)``."""
    if _json is None:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    if isinstance(value, str):
        return str(_json.encode_basestring(value))
    encode = _json.make_encoder(
        {}, _no_default, _json.encode_basestring, None, ":", ",", False, False, allow_nan
    )
    return "".join(encode(value, 0))

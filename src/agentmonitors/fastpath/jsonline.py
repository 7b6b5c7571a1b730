"""Compact JSON for the hook path and the daemon's wire, exactly as the ``json`` package.

``loads`` is ``json.loads`` and ``dumps`` is ``json.dumps(..., ensure_ascii=False,
separators=(",", ":"))``: one place for the settings every hook output and IPC line
uses. Importing ``json`` brings ``re`` and ``enum``, several milliseconds of a hook that
otherwise costs little more than the interpreter's start (docs/architecture.md, "Speed"),
so a process that has not loaded ``json`` reads and writes a small document here with
string methods only. That path is deliberately narrow: anything it is not sure of (half
a surrogate pair, a control character, a very long number, deep nesting, a large
document, a type other than the plain JSON ones, a non-string key, any error) is handed
to ``json`` itself, so every value and every error is the package's (tests compare them).
A process that has loaded ``json`` (the daemon) always uses it.
Errors are ``ValueError`` for bad text and ``RecursionError`` for nesting deeper than the
interpreter's stack, which callers reading untrusted input catch.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

# A document past these sizes goes to ``json``, whose C code wins once the import is paid.
SMALL_TEXT = 64 * 1024
SMALL_COMMAS = 1_000
SMALL_ITEMS = 2_000
MAX_DEPTH = 200

_WHITESPACE = " \t\n\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_NUMBER = frozenset("0123456789+-.eE")
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = (("true", True), ("false", False), ("null", None))
_CONSTANTS = ("NaN", "Infinity", "-Infinity")
_SPECIAL_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_ENCODE = {code: f"\\u{code:04x}" for code in range(0x20)}
_ENCODE.update({0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n"})
_ENCODE.update({0x0D: "\\r", 0x09: "\\t"})


class _Unsure(Exception):
    """The small path hands this document to the ``json`` package."""


def _float_constant(name: str) -> float:
    return float(name)  # "NaN", "Infinity", "-Infinity", as json.loads reads them


def _json() -> ModuleType:
    # Lazy: json brings re and enum, which a hook's small lines do without.
    import json

    return json


def loads(text: str, parse_constant: Callable[[str], Any] = _float_constant) -> Any:
    """``json.loads(text, parse_constant=parse_constant)``."""
    if "json" not in sys.modules and len(text) <= SMALL_TEXT and text.count(",") <= SMALL_COMMAS:
        try:
            return _decode(text, parse_constant)
        except _Unsure:
            pass
    return _json().loads(text, parse_constant=parse_constant)


def dumps(value: object, *, allow_nan: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=...)``."""
    if "json" not in sys.modules:
        parts: list[str] = []
        try:
            _encode(value, parts, allow_nan, 0)
        except _Unsure:
            pass
        else:
            return "".join(parts)
    text: str = _json().dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    return text


# --- reading ------------------------------------------------------------------------


def _skip(text: str, pos: int) -> int:
    end = len(text)
    while pos < end and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _string(text: str, pos: int) -> tuple[str, int]:
    """The string whose opening quote is just before ``pos``, and the index after it."""
    chunks: list[str] = []
    while True:
        quote = text.find('"', pos)
        if quote < 0:
            raise _Unsure
        backslash = text.find("\\", pos, quote)
        stop = quote if backslash < 0 else backslash
        chunk = text[pos:stop]
        # ``json`` refuses a raw control character inside a string.
        if not chunk.isprintable() and any(char < " " for char in chunk):
            raise _Unsure
        chunks.append(chunk)
        if backslash < 0:
            return "".join(chunks), quote + 1
        escape = text[backslash + 1 : backslash + 2]
        if escape == "u":
            digits = text[backslash + 2 : backslash + 6]
            if len(digits) != 4 or not _HEX.issuperset(digits):
                raise _Unsure
            code = int(digits, 16)
            pos = backslash + 6
            if 0xD800 <= code <= 0xDFFF:
                code, pos = _pair(text, code, pos)
            chunks.append(chr(code))
        elif escape in _ESCAPED:
            chunks.append(_ESCAPED[escape])
            pos = backslash + 2
        else:
            raise _Unsure


def _pair(text: str, high: int, pos: int) -> tuple[int, int]:
    """The code point a ``\\uD83D\\uDE00`` pair escapes; a lone half is ``json``'s."""
    low = text[pos + 2 : pos + 6]
    if high <= 0xDBFF and text.startswith("\\u", pos) and len(low) == 4 and _HEX.issuperset(low):
        code = int(low, 16)
        if 0xDC00 <= code <= 0xDFFF:
            return 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), pos + 6
    raise _Unsure


def _number(text: str, pos: int) -> tuple[int | float, int]:
    stop = pos
    end = len(text)
    while stop < end and text[stop] in _NUMBER:
        stop += 1
    literal = text[pos:stop]
    unsigned = literal[1:] if literal.startswith("-") else literal
    # Past this many digits ``int`` itself refuses (sys.get_int_max_str_digits).
    if len(unsigned) > 640:
        raise _Unsure
    if unsigned.isdigit():
        if len(unsigned) > 1 and unsigned[0] == "0":
            raise _Unsure
        return int(literal), stop
    mantissa, marker, exponent = unsigned.replace("E", "e").partition("e")
    whole, dot, fraction = mantissa.partition(".")
    valid = (
        whole.isdigit()
        and (len(whole) == 1 or whole[0] != "0")
        and (not dot or fraction.isdigit())
        and (not marker or (exponent[1:] if exponent[:1] in ("+", "-") else exponent).isdigit())
        and (dot or marker)
    )
    if not valid:
        raise _Unsure
    return float(literal), stop


def _scalar(text: str, pos: int, parse_constant: Callable[[str], Any]) -> tuple[Any, int]:
    """A string, number or literal at ``pos`` and the index after it."""
    char = text[pos : pos + 1]
    if char == '"':
        return _string(text, pos + 1)
    for name in _CONSTANTS:
        if text.startswith(name, pos):
            return parse_constant(name), pos + len(name)
    if char and char in "-0123456789":
        return _number(text, pos)
    for word, value in _LITERALS:
        if text.startswith(word, pos):
            return value, pos + len(word)
    raise _Unsure


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object's key and its colon at ``pos``; the index of the value after them."""
    if not text.startswith('"', pos):
        raise _Unsure
    key, pos = _string(text, pos + 1)
    pos = _skip(text, pos)
    if not text.startswith(":", pos):
        raise _Unsure
    return key, _skip(text, pos + 1)


def _decode(text: str, parse_constant: Callable[[str], Any]) -> Any:
    """One document, with an explicit stack of the containers being filled."""
    stack: list[list[Any] | dict[str, Any]] = []
    keys: list[str] = []
    pos = _skip(text, 0)
    while True:
        opener = text[pos : pos + 1]
        value: Any
        if opener in ("[", "{"):
            if len(stack) >= MAX_DEPTH:
                raise _Unsure
            pos = _skip(text, pos + 1)
            closer = "]" if opener == "[" else "}"
            if text.startswith(closer, pos):
                value, pos = ([] if opener == "[" else {}), pos + 1
            else:
                stack.append([] if opener == "[" else {})
                if opener == "{":
                    key, pos = _key(text, pos)
                    keys.append(key)
                continue
        else:
            value, pos = _scalar(text, pos, parse_constant)
        # Attach the value; close every container that ends here.
        while True:
            pos = _skip(text, pos)
            if not stack:
                if pos != len(text):
                    raise _Unsure
                return value
            container = stack[-1]
            if isinstance(container, list):
                container.append(value)
            else:
                container[keys[-1]] = value
            separator = text[pos : pos + 1]
            if separator == ",":
                pos = _skip(text, pos + 1)
                if isinstance(container, dict):
                    keys[-1], pos = _key(text, pos)
                break
            if separator != ("]" if isinstance(container, list) else "}"):
                raise _Unsure
            pos += 1
            value = stack.pop()
            if isinstance(value, dict):
                keys.pop()


# --- writing ------------------------------------------------------------------------


def _encode(value: object, parts: list[str], allow_nan: bool, depth: int) -> None:
    """Append ``value``'s text; exact types only, so no subclass can say otherwise."""
    kind = type(value)
    # ``isinstance`` after the exact type only tells the type checker what is known.
    if kind is str and isinstance(value, str):
        parts.append('"' + value.translate(_ENCODE) + '"')
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif kind is int and isinstance(value, int):
        parts.append(int.__repr__(value))
    elif kind is float and isinstance(value, float):
        parts.append(_float(value, allow_nan))
    elif (kind is list or kind is tuple) and isinstance(value, (list, tuple)):
        _container(depth, len(parts))
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _encode(item, parts, allow_nan, depth + 1)
        parts.append("]")
    elif kind is dict and isinstance(value, dict):
        _container(depth, len(parts))
        parts.append("{")
        for index, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                raise _Unsure
            parts.append(("," if index else "") + '"' + key.translate(_ENCODE) + '":')
            _encode(item, parts, allow_nan, depth + 1)
        parts.append("}")
    else:
        raise _Unsure


def _container(depth: int, written: int) -> None:
    # Deep or circular structures and large documents are ``json``'s.
    if depth >= MAX_DEPTH or written > SMALL_ITEMS:
        raise _Unsure


def _float(value: float, allow_nan: bool) -> str:
    text = float.__repr__(value)
    special = _SPECIAL_FLOATS.get(text)
    if special is None:
        return text
    if not allow_nan:
        raise _Unsure  # ``json`` words the refusal
    return special

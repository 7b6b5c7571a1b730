"""The argument lists of the fast commands, read without click.

click (with its own imports) costs a hook or a quick command more than its work, so the
entry point reads their arguments here from one table per command: each long option
with the parameter it fills, its kind and its allowed values, the same facts the click
declaration states (tests/fastpath/test_argv.py walks every click command of the fast
paths and holds each table equal to it).

Two readers over those tables:

- :func:`parse_plain` for the agent's commands and ``daemon once``: anything it is not
  sure of (``--help``, an unknown or malformed option, a missing required one) gives
  None, and click then parses, so every usage error is click's own.
- :func:`parse_strict` for the hooks, which never load click: a bad argument is a usage
  error worded as click words it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

# The kinds of option: a flag, one value, a repeatable value, a whole number >= 1.
FLAG, VALUE, MULTI, COUNT = "flag", "value", "multi", "count"

# option -> (parameter name, kind, allowed values or None)
Spec = dict[str, tuple[str, str, "tuple[str, ...] | None"]]


def parse_plain(
    spec: Mapping[str, tuple[str, str, tuple[str, ...] | None]],
    args: Sequence[str],
    *,
    defaults: Mapping[str, Any] | None = None,
    required: Sequence[str] = (),
    positional: str | None = None,
    once: bool = False,
) -> dict[str, Any] | None:
    """The options of a plain invocation, or None for anything click should judge.

    ``positional`` names the parameter of at most one argument that does not start
    with ``-``; ``once`` refuses an option given twice (click would take the last).
    """
    options: dict[str, Any] = dict(defaults or {})
    seen: set[str] = set()
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if positional is not None and not arg.startswith("-"):
            if positional in seen:
                return None
            seen.add(positional)
            options[positional] = arg
            continue
        name, equals, value = arg.partition("=")
        entry = spec.get(name)
        if entry is None or (once and name in seen):
            return None
        seen.add(name)
        dest, kind, choices = entry
        if kind == FLAG:
            if equals:
                return None
            options[dest] = True
            continue
        if not equals:
            if index >= len(args) or args[index].startswith("-"):
                return None
            value = args[index]
            index += 1
        parsed = _plain_value(kind, choices, value)
        if parsed is None:
            return None
        if kind == MULTI:
            options.setdefault(dest, []).append(parsed)
        else:
            options[dest] = parsed
    if any(dest not in options for dest in required):
        return None
    return options


def _plain_value(kind: str, choices: tuple[str, ...] | None, value: str) -> Any:
    if choices is not None and value not in choices:
        return None
    if kind != COUNT:
        return value
    try:
        number = int(value)
    except ValueError:
        return None
    return number if number >= 1 else None


def parse_strict(
    spec: Mapping[str, tuple[str, str, tuple[str, ...] | None]],
    args: Sequence[str],
    *,
    defaults: Mapping[str, Any] | None = None,
    unknown: Callable[[str], str] | None = None,
) -> dict[str, Any] | str:
    """The options of ``args``, or the usage error click would print (without ``error:``).

    Flags and single values only; a value may start with ``-`` (click takes it too).
    ``unknown`` words the error for an argument the table does not hold.
    """
    options: dict[str, Any] = dict(defaults or {})
    index = 0
    while index < len(args):
        arg = args[index]
        name, has_value, value = arg.partition("=")
        entry = spec.get(arg) or (spec.get(name) if has_value else None)
        if entry is None or (entry[1] == FLAG and has_value):
            return unknown(arg) if unknown is not None else f"No such option: {arg}"
        dest, kind, choices = entry
        index += 1
        if kind == FLAG:
            options[dest] = True
            continue
        if not has_value:
            if index >= len(args):
                return f"Option '{name}' requires an argument."
            value = args[index]
            index += 1
        if choices is not None and value not in choices:
            return choice_error(name, value, choices)
        options[dest] = value
    return options


def choice_error(name: str, value: str, choices: Sequence[str]) -> str:
    """click's message for a value outside an option's choices."""
    allowed = ", ".join(repr(item) for item in choices)
    return f"Invalid value for '{name}': {value!r} is not one of {allowed}."

"""Turning validation failures into messages a monitor author can act on.

Every message names the field path, says what was expected and what was found, and
carries the line number when the YAML gives one. Pydantic (frontmatter and bundled
source configs) and JSON Schema (third-party source configs) failures both end up as
:class:`Issue` values and render the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from agentmonitors.fastpath.lean_dataclass import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from jsonschema.exceptions import ValidationError as SchemaError
    from pydantic import ValidationError

Path = tuple[str | int, ...]
LineLookup = Callable[[Path], int | None]

_NOT_GIVEN: Any = object()


@dataclass(frozen=True)
class Issue:
    """One problem at one place in the authored data."""

    path: Path
    message: str
    found: Any = field(default=_NOT_GIVEN, compare=False)

    def render(self, prefix: str = "", lines: LineLookup | None = None) -> str:
        dotted = ".".join(str(part) for part in (*_split(prefix), *self.path))
        extras = []
        if self.found is not _NOT_GIVEN:
            extras.append(f"found {describe_value(self.found)}")
        line = lines(self.path) if lines is not None else None
        if line is not None:
            extras.append(f"line {line}")
        suffix = f" ({', '.join(extras)})" if extras else ""
        head = f"{dotted}: " if dotted else ""
        return f"{head}{self.message}{suffix}"


def _split(prefix: str) -> tuple[str, ...]:
    return tuple(part for part in prefix.split(".") if part)


def describe_value(value: Any) -> str:
    """A short, quoted description of an authored value for an error message."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        if not value:
            return 'empty string ""'
        return f'string "{shown}"' if value.strip() else f'blank string "{shown}"'
    # Lazy: a date is a YAML reading (whose parser loaded datetime already); validating a
    # compiled monitor never describes a value and needs no datetime.
    import datetime

    if isinstance(value, datetime.datetime):
        return f"timestamp {value.isoformat()} (quote it to make it a string)"
    if isinstance(value, datetime.date):
        return f"date {value.isoformat()} (quote it to make it a string)"
    if isinstance(value, Mapping):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list | tuple):
        return (
            f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
            if value
            else ("an empty list")
        )
    return type(value).__name__


# --------------------------------------------------------------------------- pydantic

_EXPECTED_BY_TYPE = {
    "string_type": "expected a string",
    "int_type": "expected a whole number",
    "bool_type": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
    "float_type": "expected a number",
}


def _resolve_path(loc: Sequence[str | int], raw: Any) -> tuple[Path, Any]:
    """Map a pydantic ``loc`` onto the authored data.

    Discriminated unions and validator wrappers add steps (``debounce``, ``str``) that
    do not exist in the YAML; they are dropped so the path is the one the author wrote.
    Returns the path and the authored value found there (or ``_NOT_GIVEN``).
    """
    path: list[str | int] = []
    current: Any = raw
    for index, step in enumerate(loc):
        if isinstance(current, Mapping) and step in current:
            current = current[step]
            path.append(step)
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            current = current[int(step)]
            path.append(step)
        elif index == len(loc) - 1:
            # A key the author did not write: the path still names it.
            path.append(step)
            current = _NOT_GIVEN
        # Any other step is a union or validator step with no place in the YAML.
    return tuple(path), current


def issues_from_pydantic(error: ValidationError, raw: Any) -> list[Issue]:
    issues: list[Issue] = []
    for detail in error.errors(include_url=False):
        path, found = _resolve_path(detail["loc"], raw)
        kind = detail["type"]
        ctx = detail.get("ctx") or {}
        if kind == "missing":
            issues.append(Issue(path, "is required"))
        elif kind in _EXPECTED_BY_TYPE:
            issues.append(Issue(path, _EXPECTED_BY_TYPE[kind], found))
        elif kind in {"literal_error", "enum"}:
            issues.append(Issue(path, f"expected one of {ctx.get('expected', '')}", found))
        elif kind == "union_tag_invalid":
            key = str(ctx.get("discriminator", "")).strip("'")
            value = found.get(key, _NOT_GIVEN) if isinstance(found, Mapping) else _NOT_GIVEN
            issues.append(
                Issue((*path, key), f"expected one of {ctx.get('expected_tags', '')}", value)
            )
        elif kind == "union_tag_not_found":
            key = str(ctx.get("discriminator", "")).strip("'")
            if isinstance(found, Mapping):
                issues.append(Issue((*path, key), "is required"))
            else:
                issues.append(Issue(path, "expected a mapping", found))
        elif kind == "extra_forbidden":
            issues.append(Issue(path, "is not a known key in this block", found))
        elif kind == "too_short":
            issues.append(Issue(path, "must not be empty", found))
        elif kind == "too_long":
            limit = ctx.get("max_length")
            issues.append(Issue(path, f"must have at most {limit} items", found))
        else:
            # Our own validators raise PydanticCustomError / ValueError with a finished
            # sentence; pydantic prefixes ValueError text with "Value error, ".
            message = str(detail["msg"]).removeprefix("Value error, ")
            shows_found = kind in {"value_error", "assertion_error"} or kind.startswith("am_")
            issues.append(Issue(path, message, found if shows_found else _NOT_GIVEN))
    return _dedupe(issues)


def _dedupe(issues: Iterable[Issue]) -> list[Issue]:
    seen: set[tuple[Path, str]] = set()
    unique: list[Issue] = []
    for issue in issues:
        key = (issue.path, issue.message)
        if key not in seen:
            seen.add(key)
            unique.append(issue)
    return unique


# --------------------------------------------------------------------------- JSON Schema

_JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def _expected_types(schema: Mapping[str, Any]) -> str:
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types or [])
    return " or ".join(_JSON_TYPE_NAMES.get(name, name) for name in names) or "another value"


def _schema_message(error: SchemaError) -> str:
    validator = error.validator
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    value: Any = error.validator_value
    if validator == "type":
        return f"expected {_expected_types(schema)}"
    if validator == "enum":
        return "expected one of " + ", ".join(repr(item) for item in value)
    if validator == "const":
        return f"expected {value!r}"
    if validator == "pattern":
        description = schema.get("description")
        return f"does not match the pattern {value}" + (f" ({description})" if description else "")
    if validator == "minItems":
        return "must not be empty" if value == 1 else f"needs at least {value} items"
    if validator == "maxItems":
        return f"must have at most {value} items"
    if validator == "minLength":
        return "must not be empty" if value == 1 else f"must be at least {value} characters"
    if validator == "maxLength":
        return f"must be at most {value} characters"
    if validator in {"oneOf", "anyOf"}:
        options = [
            _expected_types(option)
            for option in value
            if isinstance(option, Mapping) and "type" in option
        ]
        return f"expected {' or '.join(options)}" if options else "does not match any allowed form"
    if validator == "additionalProperties":
        return error.message
    return error.message


def issues_from_jsonschema(errors: Iterable[SchemaError]) -> list[Issue]:
    issues: list[Issue] = []
    for error in errors:
        path: Path = tuple(error.absolute_path)
        if error.validator == "required":
            required: Any = error.validator_value
            instance: Any = error.instance if isinstance(error.instance, Mapping) else {}
            missing = [name for name in required if name not in instance]
            for name in missing:
                issues.append(Issue((*path, name), "is required"))
            continue
        if error.validator in {"if", "then", "allOf"}:
            continue
        issues.append(Issue(path, _schema_message(error), error.instance))
    return _dedupe(issues)

"""Reading a bundled source's config with the standard library, for ``observe``.

The tick only runs monitors that validated, so what ``observe`` is handed is nearly
always a valid watch block of plain YAML/JSON values. Each bundled source reads it here
into a small frozen dataclass holding exactly what its pydantic model would (defaults
filled in, a bare glob string as a one-item list, durations as authored), without
importing pydantic. Each reader accepts only what it is sure the model accepts and
gives the same values for; anything else (a wrong type, a value out of range, a key
spelled the model's other way) raises :class:`Unexpected`, and the source then
validates with its model: an invalid block fails with the model's own message, and a
valid one the reader did not expect is read from the model's values
(``ModelSource.observed_config``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.cron import cron_problem, timezone_is_valid
from agentmonitors.monitor.durations import is_duration, timeout_problem
from agentmonitors.sources.change_detection import collection_path_problem, ignore_path_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")


class Unexpected(Exception):
    """A config the standard-library reading is not sure about: the model decides."""


def block(value: Any, known: Sequence[str] | None = None) -> dict[str, Any]:
    """A mapping of the config (keys are strings); with ``known``, only those keys (a
    closed block)."""
    if type(value) is not dict or any(type(key) is not str for key in value):
        raise Unexpected
    if known is not None and any(key not in known for key in value):
        raise Unexpected
    return value


def absent_as(config: Mapping[str, Any], key: str, default: T, read: Callable[[Any], T]) -> T:
    """``read`` of the authored value, or ``default`` (as the model's, unchecked) when absent."""
    if key not in config:
        return default
    return read(config[key])


def text(value: Any) -> str:
    if type(value) is not str:
        raise Unexpected
    return value


def optional_text(value: Any) -> str | None:
    return None if value is None else text(value)


def non_blank(value: Any) -> str:
    if not text(value).strip():
        raise Unexpected
    return str(value)


def non_empty(value: Any) -> str:
    if not text(value):
        raise Unexpected
    return str(value)


def one_of(*choices: str) -> Callable[[Any], str]:
    def read(value: Any) -> str:
        if text(value) not in choices:
            raise Unexpected
        return str(value)

    return read


def duration(value: Any) -> str:
    if not is_duration(text(value)):
        raise Unexpected
    return str(value)


def timeout(value: Any) -> str:
    if timeout_problem(text(value)) is not None:
        raise Unexpected
    return str(value)


def cron(value: Any) -> str:
    if cron_problem(text(value)) is not None:
        raise Unexpected
    return str(value)


def timezone(value: Any) -> str:
    if not timezone_is_valid(text(value)):
        raise Unexpected
    return str(value)


def texts(value: Any) -> list[str]:
    """A list of strings, copied."""
    if type(value) is not list or any(type(item) is not str for item in value):
        raise Unexpected
    return list(value)


def optional_string_map(value: Any) -> dict[str, str] | None:
    """None, or a mapping of strings to strings, copied."""
    if value is None:
        return None
    mapping = block(value)
    if any(type(key) is not str or type(item) is not str for key, item in mapping.items()):
        raise Unexpected
    return dict(mapping)


def glob_patterns(value: Any) -> list[str]:
    """One glob or a non-empty list of them, none blank (a bare string is a one-item list)."""
    patterns = texts([value] if type(value) is str else value)
    if not patterns or any(not pattern.strip() for pattern in patterns):
        raise Unexpected
    return patterns


def optional_glob_patterns(value: Any) -> list[str]:
    if type(value) is list and not value:
        return []
    return glob_patterns(value)


def ignore_paths(value: Any) -> list[str]:
    paths = texts(value)
    if any(ignore_path_problem(path) is not None for path in paths):
        raise Unexpected
    return paths


@dataclass(frozen=True)
class CollectionSettings:
    """A ``change-detection.collection`` block: diff a JSON array's items by key."""

    path: str
    key: str
    ignore_paths: list[str]


def collection(value: Any, *, closed: bool) -> CollectionSettings:
    """A collection block; ``closed`` (command-poll) allows no other keys."""
    config = block(value, ("path", "key", "ignore-paths") if closed else None)
    if "ignore_paths" in config or "path" not in config or "key" not in config:
        raise Unexpected
    path = non_blank(config["path"])
    if collection_path_problem(path) is not None:
        raise Unexpected
    return CollectionSettings(
        path=path,
        key=non_blank(config["key"]),
        ignore_paths=absent_as(config, "ignore-paths", [], ignore_paths),
    )

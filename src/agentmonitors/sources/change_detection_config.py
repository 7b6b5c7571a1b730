"""Config blocks shared by api-poll and command-poll, as pydantic models: keyed
collections and JSON paths (the path rules themselves are in ``change_detection.py``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from agentmonitors.monitor.fields import fail, require_str
from agentmonitors.sources.base_config import ClosedBlock, OpenBlock
from agentmonitors.sources.change_detection import collection_path_problem, ignore_path_problem


def _non_empty(value: Any, what: str) -> str:
    text = require_str(value)
    if not text.strip():
        raise fail(f"change-detection.collection.{what} must be a non-empty string", "am_empty")
    return text


def validate_ignore_paths(value: Any) -> list[str]:
    """An ``ignore-paths`` list, each entry checked; raises an author-facing error."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail("change-detection.ignore-paths must be an array of strings", "am_type")
    for item in value:
        problem = ignore_path_problem(item)
        if problem is not None:
            raise fail(problem, "am_path")
    return list(value)


_PATH_HELP = 'Dotted path to the array, e.g. "tasks" or "$.tasks".'
_KEY_HELP = "Field of each element that identifies it."
_IGNORE_HELP = 'Paths inside each element left out of the comparison, e.g. "$.fetchedAt".'


class _CollectionFields(BaseModel):
    """A keyed collection's fields and their checks; the open and the closed block differ
    only in what an unknown key is."""

    path: str = Field(description=_PATH_HELP, json_schema_extra={"type": "string"})
    key: str = Field(description=_KEY_HELP, json_schema_extra={"type": "string"})
    ignore_paths: list[str] = Field(
        default_factory=list,
        alias="ignore-paths",
        description=_IGNORE_HELP,
        json_schema_extra={"type": "array", "items": {"type": "string"}},
    )

    @field_validator("path", mode="plain")
    @classmethod
    def _path(cls, value: Any) -> str:
        text = _non_empty(value, "path")
        problem = collection_path_problem(text)
        if problem is not None:
            raise fail(f"change-detection.collection.path {problem}", "am_path")
        return text

    @field_validator("key", mode="plain")
    @classmethod
    def _key(cls, value: Any) -> str:
        return _non_empty(value, "key")

    @field_validator("ignore_paths", mode="plain")
    @classmethod
    def _ignore(cls, value: Any) -> list[str]:
        return validate_ignore_paths(value)


class Collection(_CollectionFields, OpenBlock):
    """Keyed-collection mode: diff the items of a JSON array by a key field."""


class ClosedCollection(_CollectionFields, ClosedBlock):
    """The same block for command-poll, where unknown keys are errors."""


def require_json_diff(value: Any, info: ValidationInfo, what: str) -> Any:
    """``collection`` / ``ignore-paths`` only make sense under ``strategy: json-diff``."""
    # A strategy that failed its own check is already reported; say nothing more.
    if value is not None and "strategy" in info.data and info.data["strategy"] != "json-diff":
        raise fail(f"change-detection.{what} requires strategy: json-diff", "require_json_diff")
    return value

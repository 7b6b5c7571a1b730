"""incoming-changes' config: the ``watch`` block as a pydantic model.

Loaded only to validate or to describe the block (its JSON Schema); observing reads a
validated block with the standard library (``IncomingChangesSettings``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, PlainValidator, WithJsonSchema

from agentmonitors.monitor.fields import Duration, fail, require_str
from agentmonitors.sources.base_config import SourceConfig


def _pathspecs(value: Any) -> list[str]:
    if isinstance(value, str):
        raise fail(
            f"must be an array of strings — write it as a list: paths: ['{value}']",
            "am_type",
        )
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail("must be an array of strings", "am_type")
    if not value:
        raise fail("must contain at least one git pathspec", "am_empty")
    if any(not item.strip() for item in value):
        raise fail("must not contain empty pathspecs", "am_empty")
    return list(value)


def _branch(value: Any) -> str:
    text = require_str(value, 'a branch or ref name such as "main"')
    if not text.strip():
        raise fail("must not be empty", "am_empty")
    return text


Pathspecs = Annotated[
    list[str],
    PlainValidator(_pathspecs),
    WithJsonSchema({"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}),
]
Branch = Annotated[str, PlainValidator(_branch), WithJsonSchema({"type": "string", "minLength": 1})]


class IncomingChangesConfig(SourceConfig):
    paths: Pathspecs = Field(description='Git pathspecs to report on, e.g. ["docs/specs/**"].')
    branch: Branch = Field(default="HEAD", description="Branch or ref whose movement is tracked.")
    cwd: str | None = Field(
        default=None,
        description="Repository folder: the workspace root when omitted; relative paths "
        "resolve under it.",
    )
    interval: Duration = Field(default="30s", description="How often the ref is checked.")

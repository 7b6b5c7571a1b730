"""command-poll's config: the ``watch`` block as pydantic models.

Loaded only to validate or to describe the block (its JSON Schema); observing reads a
validated block with the standard library (``CommandPollSettings``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from agentmonitors.monitor.fields import Duration, Timeout, fail
from agentmonitors.sources.base_config import ClosedBlock, SourceConfig
from agentmonitors.sources.change_detection_config import (
    ClosedCollection,
    require_json_diff,
    validate_ignore_paths,
)

ARGV_MESSAGE = 'must be a non-empty array of strings (argv form, e.g. ["git", "status"]).'


def _argv(value: Any) -> list[str]:
    if isinstance(value, str):
        raise fail(
            f'{ARGV_MESSAGE} To run it through a shell, write ["sh", "-c", "{value}"].',
            "am_argv",
        )
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise fail(ARGV_MESSAGE, "am_argv")
    return list(value)


OK_EXIT_CODES_MESSAGE = (
    "must be a non-empty list of exit codes from 0 to 255 (e.g. [0, 1] for grep, which "
    "exits 1 when nothing matches)."
)


def _ok_exit_codes(value: Any) -> list[int]:
    if (
        not isinstance(value, list)
        or not value
        or not all(
            isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 255
            for code in value
        )
    ):
        raise fail(OK_EXIT_CODES_MESSAGE, "am_exit_codes")
    return list(value)


OkExitCodes = Annotated[
    list[int],
    PlainValidator(_ok_exit_codes),
    WithJsonSchema(
        {
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 255},
            "minItems": 1,
        }
    ),
]

Argv = Annotated[
    list[str],
    PlainValidator(_argv),
    WithJsonSchema({"type": "array", "items": {"type": "string"}, "minItems": 1}),
]


class CommandChangeDetection(ClosedBlock):
    strategy: Literal["text-diff", "json-diff", "exit-code"] = Field(
        default="text-diff", description="Compare stdout as text, as JSON, or the exit code."
    )
    ignore_paths: list[str] | None = Field(
        default=None,
        alias="ignore-paths",
        description='JSON paths dropped before a json-diff comparison, e.g. "$.fetchedAt".',
        json_schema_extra={"type": "array", "items": {"type": "string"}},
    )
    collection: ClosedCollection | None = Field(
        default=None, description="Diff the items of a JSON array by key (needs json-diff)."
    )

    @field_validator("ignore_paths", mode="plain")
    @classmethod
    def _ignore_paths(cls, value: Any, info: ValidationInfo) -> list[str] | None:
        if value is None:
            return None
        paths = validate_ignore_paths(value)
        result: list[str] = require_json_diff(paths, info, "ignore-paths")
        return result

    @field_validator("collection")
    @classmethod
    def _collection(
        cls, value: ClosedCollection | None, info: ValidationInfo
    ) -> ClosedCollection | None:
        result: ClosedCollection | None = require_json_diff(value, info, "collection")
        return result


class CommandPollConfig(SourceConfig):
    command: Argv = Field(
        description="Argv list run directly, never through a shell; for pipes use "
        '["sh", "-c", "a | b"].'
    )
    cwd: str | None = Field(
        default=None,
        description="Working folder: the workspace root when omitted; relative paths "
        "resolve under it.",
    )
    env: dict[str, str] | None = Field(
        default=None, description="Variables added to the daemon's environment; never stored."
    )
    timeout: Timeout = Field(default="30s", description="Wall-clock limit for one run.")
    key: str | None = Field(
        default=None, description="Identity of the observed object (default: the argv joined)."
    )
    interval: Duration = Field(default="30s", description="How often the command runs.")
    ok_exit_codes: OkExitCodes | None = Field(
        default=None,
        alias="ok-exit-codes",
        description="Exit codes that are ordinary results (default [0]); any other is a "
        "failure, reported with its exit status and stderr. With change-detection.strategy: "
        "exit-code the exit code is what is watched, so every code is ordinary there.",
    )
    change_detection: CommandChangeDetection | None = Field(
        default=None, alias="change-detection", description="How two runs are compared."
    )

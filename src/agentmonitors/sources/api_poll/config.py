"""api-poll's config: the ``watch`` block of an api-poll monitor, as pydantic models.

Kept apart from the observing code in :mod:`agentmonitors.sources.api_poll` so each
reads on its own; the JSON Schema ``validate`` and ``schema generate`` use is derived
from :class:`ApiPollConfig`. Loaded only to validate or to describe the block;
observing reads a validated block with the standard library (``api_poll/plain.py``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from agentmonitors.monitor.fields import Duration, Timeout, fail, require_str
from agentmonitors.sources.api_poll.plain import (
    MAX_COMPOSITE_PARTS,
    MAX_PART_ID_LENGTH,
    http_url_problem,
)
from agentmonitors.sources.base_config import OpenBlock, SourceConfig
from agentmonitors.sources.change_detection_config import Collection, require_json_diff


class Auth(OpenBlock):
    type: Literal["bearer", "basic"] = Field(description="bearer (a token) or basic.")
    token: str | None = Field(default=None, description="Bearer token (prefer token-env).")
    token_env: str | None = Field(
        default=None, alias="token-env", description="Environment variable holding the token."
    )
    username: str | None = Field(default=None, description="Basic auth user.")
    password: str | None = Field(default=None, description="Basic auth password.")


class CompositePart(OpenBlock):
    id: str = Field(
        description="Stable name of this part of the whole.",
        json_schema_extra={"type": "string", "minLength": 1, "maxLength": MAX_PART_ID_LENGTH},
    )
    url: str = Field(description="URL fetched for this part.", json_schema_extra={"type": "string"})

    @field_validator("id", mode="plain")
    @classmethod
    def _id(cls, value: Any) -> str:
        text = require_str(value)
        if not text:
            raise fail("change-detection.composite.parts[].id must be non-empty", "am_empty")
        if len(text) > MAX_PART_ID_LENGTH:
            raise fail(
                f"change-detection.composite.parts[].id must be at most {MAX_PART_ID_LENGTH} "
                f"characters (got {len(text)})",
                "part_id_length",
            )
        return text

    @field_validator("url", mode="plain")
    @classmethod
    def _url(cls, value: Any) -> str:
        text = require_str(value)
        if not text:
            raise fail("change-detection.composite.parts[].url must be non-empty", "am_empty")
        problem = http_url_problem(text)
        if problem is not None:
            raise fail(problem, "am_url")
        return text


class Composite(OpenBlock):
    object_key: str = Field(
        alias="object-key",
        description="Identity of the assembled whole.",
        json_schema_extra={"type": "string", "minLength": 1},
    )
    title: str | None = Field(default=None, description="Event title for the composite.")
    parts: list[CompositePart] = Field(
        description=f"1 to {MAX_COMPOSITE_PARTS} sub-resources combined into one snapshot."
    )

    @field_validator("object_key", mode="plain")
    @classmethod
    def _object_key(cls, value: Any) -> str:
        text = require_str(value)
        if not text.strip():
            raise fail("change-detection.composite.object-key must be non-empty", "am_empty")
        return text

    @field_validator("parts")
    @classmethod
    def _parts(cls, value: list[CompositePart]) -> list[CompositePart]:
        if not value:
            raise fail("change-detection.composite.parts must contain at least 1 entry", "count")
        if len(value) > MAX_COMPOSITE_PARTS:
            raise fail(
                f"change-detection.composite.parts must not exceed {MAX_COMPOSITE_PARTS} "
                f"entries (got {len(value)})",
                "count",
            )
        return value


class ApiChangeDetection(OpenBlock):
    strategy: Literal["json-diff", "text-diff", "status-code"] | None = Field(
        default=None,
        description="Inferred from Content-Type when omitted: JSON bodies use json-diff, "
        "everything else text-diff.",
    )
    collection: Collection | None = Field(
        default=None, description="Diff the items of a JSON array by key (needs json-diff)."
    )
    composite: Composite | None = Field(
        default=None, description="Fetch several URLs and treat them as one object."
    )

    @field_validator("collection")
    @classmethod
    def _collection(cls, value: Collection | None, info: ValidationInfo) -> Collection | None:
        result: Collection | None = require_json_diff(value, info, "collection")
        return result

    @field_validator("composite")
    @classmethod
    def _composite(cls, value: Composite | None, info: ValidationInfo) -> Composite | None:
        if value is not None and info.data.get("collection") is not None:
            raise fail(
                "change-detection.composite and change-detection.collection are mutually exclusive",
                "exclusive",
            )
        return value


class ApiPollConfig(SourceConfig):
    change_detection: ApiChangeDetection | None = Field(
        default=None, alias="change-detection", description="How two responses are compared."
    )
    url: str | None = Field(
        default=None,
        validate_default=True,
        description="URL to poll (required unless change-detection.composite is set).",
        json_schema_extra={"type": "string"},
    )
    method: Literal["GET", "POST"] = Field(default="GET", description="HTTP method (no body).")
    headers: dict[str, str] | None = Field(default=None, description="Extra request headers.")
    auth: Auth | None = Field(default=None, description="Bearer or basic authentication.")
    timeout: Timeout = Field(default="30s", description="Deadline for one whole request.")
    interval: Duration = Field(default="5m", description="How often the URL is fetched.")

    @field_validator("url", mode="plain")
    @classmethod
    def _url(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None:
            if "change_detection" not in info.data:
                return None  # change-detection itself is invalid and already reported
            detection = info.data["change_detection"]
            if detection is not None and detection.composite is not None:
                return None
            raise fail("is required (or configure change-detection.composite)", "url_missing")
        text = require_str(value, "a URL string")
        if not text.strip():
            raise fail("must not be empty", "am_empty")
        problem = http_url_problem(text)
        if problem is not None:
            raise fail(problem, "am_url")
        return text

    @field_validator("auth")
    @classmethod
    def _auth(cls, value: Auth | None) -> Auth | None:
        if value is not None and value.type == "bearer" and not (value.token or value.token_env):
            raise fail(
                "Bearer auth requires a token. Add auth.token or auth.token-env to your "
                "monitor's watch block.",
                "bearer_token",
            )
        return value

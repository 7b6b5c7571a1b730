"""api-poll: an HTTP endpoint's response, compared as text, JSON or status code."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import Field, ValidationInfo, field_validator

from agentmonitors.monitor.durations import duration_ms
from agentmonitors.monitor.fields import Duration, Timeout, fail, require_str
from agentmonitors.sources import api_poll_traits
from agentmonitors.sources.base import ModelSource, OpenBlock, SourceConfig
from agentmonitors.sources.change_detection import Collection, require_json_diff
from agentmonitors.sources.collections_diff import (
    KEYED_SNAPSHOT_FIELD,
    canonical_json,
    collection_items,
    collection_observations,
    display_object_key,
    keyed_snapshot_from_state,
)
from agentmonitors.sources.http_fetch import (
    MAX_RESPONSE_BYTES,
    FetchedResponse,
    FetchError,
    fetch,
    open_client,
)
from agentmonitors.sources.observation import (
    Observation,
    ObservationContext,
    ObservationResult,
)
from agentmonitors.sources.redact import display_url, is_sensitive_name, redact_url

MAX_COMPOSITE_PARTS = 50
MAX_PART_ID_LENGTH = 256
MAX_COMPOSITE_CONCURRENCY: Final = 5
MAX_COMPOSITE_BYTES: Final = MAX_RESPONSE_BYTES
Strategy = Literal["json-diff", "text-diff", "status-code"]


class Auth(OpenBlock):
    type: Literal["bearer", "basic"] = Field(description="bearer (a token) or basic.")
    token: str | None = Field(default=None, description="Bearer token (prefer token-env).")
    token_env: str | None = Field(
        default=None, alias="token-env", description="Environment variable holding the token."
    )
    username: str | None = Field(default=None, description="Basic auth user.")
    password: str | None = Field(default=None, description="Basic auth password.")


def http_url_problem(text: str) -> str | None:
    """Why ``text`` is not an absolute http(s) URL with a host, or None when it is one."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as error:
        return f"must be an http(s) URL ({error})"
    if parts.scheme.lower() not in ("http", "https"):
        shown = f'"{parts.scheme}:"' if parts.scheme else "none"
        return f"must be an http:// or https:// URL (scheme found: {shown})"
    if not parts.hostname:
        return "must be an http:// or https:// URL with a host, e.g. https://example.com/status"
    return None


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


class ApiPollSource(ModelSource):
    name = "api-poll"
    description = "Reports when an HTTP endpoint's response body or status changes."
    stateful = True
    config_model = ApiPollConfig
    # What it says about itself beyond observing (sources/traits.py).
    default_interval_ms = api_poll_traits.DEFAULT_INTERVAL_MS
    baseline_notes = api_poll_traits.BASELINE_NOTES
    scaffold = staticmethod(api_poll_traits.scaffold)
    baseline_summary = staticmethod(api_poll_traits.baseline_summary)
    approval = staticmethod(api_poll_traits.approval)

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """Fetch the URL (or every composite part) once and compare with the last state.

        Raises with a redacted, author-facing message on an invalid config, a missing
        token variable, a transport failure, a timeout, an oversized body or a non-2xx
        answer under a body strategy; the runtime then keeps the stored baseline.
        """
        parsed = self.checked_config(config)
        assert isinstance(parsed, ApiPollConfig)
        request = _request_for(parsed)
        detection = parsed.change_detection
        if detection is not None and detection.composite is not None:
            return await _observe_composite(request, detection.composite, context)
        assert parsed.url is not None  # the model requires it outside composite mode
        return await _observe_url(request, parsed.url, detection, context)


# --- observe ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    """What every request of one observation shares."""

    method: str
    headers: dict[str, str]
    timeout_ms: int
    # Credential values to mask if they ever surface in an error message.
    secrets: list[str] = field(default_factory=list)


def _request_for(config: ApiPollConfig) -> _Request:
    headers, secrets = _auth_headers(config.auth)
    for name, value in (config.headers or {}).items():
        # Authored headers come after auth: an explicit Authorization wins.
        for existing in [key for key in headers if key.lower() == name.lower()]:
            del headers[existing]
        headers[name] = value
        if is_sensitive_name(name):
            secrets.append(value)
    return _Request(config.method, headers, duration_ms(config.timeout), secrets)


def _auth_headers(auth: Auth | None) -> tuple[dict[str, str], list[str]]:
    """The Authorization header for ``auth``, read now (env variables included)."""
    if auth is None:
        return {}, []
    if auth.type == "bearer":
        token = auth.token or (_env(auth.token_env) if auth.token_env else None)
        if not token:
            if auth.token_env:
                raise ValueError(
                    f"Bearer auth requires a token. Set the {auth.token_env} environment "
                    "variable or add auth.token to your monitor's watch block."
                )
            raise ValueError(
                "Bearer auth requires a token. Add auth.token or auth.token-env to your "
                "monitor's watch block."
            )
        return {"Authorization": f"Bearer {token}"}, [token]
    username = auth.username or ""
    password = auth.password
    if password is None and auth.token_env:
        password = _env(auth.token_env)
        if password is None:
            raise ValueError(
                f"Basic auth reads its password from the {auth.token_env} environment "
                "variable, which is not set. Set it or add auth.password to your monitor's "
                "watch block."
            )
    password = password or ""
    encoded = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    secrets = [secret for secret in (password, encoded) if secret]
    return {"Authorization": f"Basic {encoded}"}, secrets


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


async def _observe_url(
    request: _Request,
    url: str,
    detection: ApiChangeDetection | None,
    context: ObservationContext,
) -> ObservationResult:
    explicit = detection.strategy if detection is not None else None
    collection = detection.collection if detection is not None else None
    shown = display_url(url)
    identity = redact_url(url)
    async with open_client(request.timeout_ms) as client:
        response = await fetch(
            client,
            url,
            method=request.method,
            headers=request.headers,
            timeout_ms=request.timeout_ms,
            read_body=explicit != "status-code",
            secrets=request.secrets,
        )
    strategy: Strategy = explicit or _inferred_strategy(response.content_type)
    if strategy != "status-code" and not response.ok:
        raise FetchError(
            f"api-poll received HTTP {response.status} from {shown} — check auth/url; "
            "not establishing a baseline on an error response"
        )
    previous = context.previous_state if isinstance(context.previous_state, Mapping) else None
    body = response.body
    if collection is not None:
        try:
            document = _parse_json(body)
        except ValueError as error:
            raise ValueError(
                f"api-poll response from {shown} is not JSON, which "
                f"change-detection.collection needs: {error}"
            ) from None
        items = collection_items(document, collection)
        observations = collection_observations(
            keyed_snapshot_from_state(previous),
            items,
            scope_key=identity,
            display_scope=shown,
            payload={"url": identity},
            query_scope={"url": identity},
        )
        return ObservationResult(
            observations=observations,
            next_state={"body": body, "status": response.status, KEYED_SNAPSHOT_FIELD: items},
        )
    warnings: list[str] = []
    if explicit == "json-diff" and not _parses(body):
        warnings.append(
            f"api-poll: change-detection.strategy is json-diff but the response from {shown} "
            "does not parse as JSON; falling back to text comparison. Use strategy: text-diff "
            "for HTML/plain-text pages."
        )
    next_state = {"body": body, "status": response.status}
    observations = []
    if (
        previous is not None
        and _has_baseline(previous)
        and _changed(strategy, previous, next_state)
    ):
        observations.append(_response_observation(identity, shown, strategy, response))
    return ObservationResult(observations=observations, next_state=next_state, warnings=warnings)


def _response_observation(
    identity: str, shown: str, strategy: Strategy, response: FetchedResponse
) -> Observation:
    title = f"API response changed: {display_object_key(shown)}"
    return Observation(
        title=title,
        summary=title,
        payload={
            "url": identity,
            "status": response.status,
            "strategy": strategy,
            "body": response.body,
        },
        snapshot_text=response.body,
        snapshot={
            "url": identity,
            "status": response.status,
            "bodyLength": len(response.body),
            "strategy": strategy,
        },
        object_key=identity,
        query_scope={"url": identity},
    )


def _inferred_strategy(content_type: str | None) -> Strategy:
    """JSON media types (``application/json``, ``*+json``) diff as JSON, all else as text."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return "json-diff" if media == "application/json" or media.endswith("+json") else "text-diff"


def _has_baseline(previous: Mapping[str, Any] | None) -> bool:
    return previous is not None and "status" in previous and "body" in previous


def _changed(strategy: Strategy, previous: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    if strategy == "status-code":
        return bool(previous["status"] != current["status"])
    old, new = previous["body"], current["body"]
    if strategy == "json-diff" and isinstance(old, str):
        try:
            return canonical_json(_parse_json(old)) != canonical_json(_parse_json(new))
        except (ValueError, RecursionError):
            pass
    return bool(old != new)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def _parse_json(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _parses(text: str) -> bool:
    try:
        _parse_json(text)
    except (ValueError, RecursionError):
        return False
    return True


# --- composite ----------------------------------------------------------------------


async def _observe_composite(
    request: _Request, composite: Composite, context: ObservationContext
) -> ObservationResult:
    rendered = await _render_composite(request, composite)
    previous = context.previous_state
    next_state = {"composite": rendered}
    if not isinstance(previous, Mapping) or not isinstance(previous.get("composite"), str):
        return ObservationResult(next_state=next_state)
    if previous["composite"] == rendered:
        return ObservationResult(next_state=next_state)
    title = composite.title or f"Composite snapshot: {composite.object_key}"
    ids = sorted(part.id for part in composite.parts)
    return ObservationResult(
        observations=[
            Observation(
                title=title,
                summary=title,
                payload={"objectKey": composite.object_key, "parts": [{"id": i} for i in ids]},
                snapshot_text=rendered,
                snapshot={"objectKey": composite.object_key, "partCount": len(ids)},
                object_key=composite.object_key,
                query_scope={"objectKey": composite.object_key},
            )
        ],
        next_state=next_state,
    )


async def _render_composite(request: _Request, composite: Composite) -> str:
    """Every part fetched (≤ 5 at once), rendered in ``id`` order; any failure fails all."""
    gate = asyncio.Semaphore(MAX_COMPOSITE_CONCURRENCY)
    sections: dict[int, tuple[str, str]] = {}
    total = 0

    async def fetch_part(index: int, part: CompositePart) -> None:
        nonlocal total
        async with gate:
            response = await fetch(
                client,
                part.url,
                method=request.method,
                headers=request.headers,
                timeout_ms=request.timeout_ms,
                secrets=request.secrets,
            )
        if not response.ok:
            raise FetchError(
                f'api-poll received HTTP {response.status} from composite part "{part.id}" '
                f"({display_url(part.url)}) — check auth/url; not establishing a baseline on "
                "an error response"
            )
        total += len(_section(part.id, response.body).encode())
        if total > MAX_COMPOSITE_BYTES:
            raise FetchError(
                f'api-poll composite "{composite.object_key}" exceeded the '
                f"{MAX_COMPOSITE_BYTES}-byte cumulative rendered-artifact budget after part "
                f'"{part.id}" ({total} bytes so far) — reduce the number or size of parts '
                "or split the monitor"
            )
        sections[index] = (part.id, response.body)

    async with open_client(request.timeout_ms) as client:
        try:
            async with asyncio.TaskGroup() as group:
                for index, part in enumerate(composite.parts):
                    group.create_task(fetch_part(index, part))
        except BaseExceptionGroup as failures:
            raise _first_leaf(failures) from None
    ordered = sorted(sections.values(), key=lambda section: section[0])
    rendered = "\n\n".join(_section(part_id, body) for part_id, body in ordered)
    size = len(rendered.encode())
    if size > MAX_COMPOSITE_BYTES:
        raise FetchError(
            f'api-poll composite "{composite.object_key}" exceeded the {MAX_COMPOSITE_BYTES}-byte '
            f"cumulative rendered-artifact budget ({size} bytes across {len(ordered)} rendered "
            "parts including separators) — reduce the number or size of parts or split the "
            "monitor"
        )
    return rendered


def _section(part_id: str, body: str) -> str:
    return f"## {part_id}\n{body}"


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    if isinstance(first, BaseExceptionGroup):
        return _first_leaf(first)
    return first

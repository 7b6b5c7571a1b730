"""api-poll: an HTTP endpoint's response, compared as text, JSON or status code."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.durations import duration_ms
from agentmonitors.sources.api_poll import traits as api_poll_traits
from agentmonitors.sources.api_poll.http_fetch import (
    FetchedResponse,
    FetchError,
    fetch,
    open_client,
)
from agentmonitors.sources.api_poll.plain import (
    MAX_COMPOSITE_BYTES,
    MAX_COMPOSITE_CONCURRENCY,
    ApiChangeDetectionSettings,
    ApiPollSettings,
    AuthSettings,
    CompositePartSettings,
    CompositeSettings,
    Strategy,
    plain_config,
)
from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.collections_diff import (
    KEYED_SNAPSHOT_FIELD,
    canonical_json,
    collection_items,
    collection_observations,
    display_object_key,
    keyed_snapshot_from_state,
)
from agentmonitors.sources.observation import (
    Observation,
    ObservationContext,
    ObservationResult,
)
from agentmonitors.sources.permit import WORKSPACE_ONLY, Permit
from agentmonitors.sources.redact import display_url, is_sensitive_name, redact_url
from agentmonitors.sources.traits import Approval


class ApiPollSource(ModelSource):
    name = "api-poll"
    description = "Reports when an HTTP endpoint's response body or status changes."
    stateful = True
    # A request per run: once a second at most (a local server; a remote one deserves more).
    min_interval_ms = 1_000
    config_model_ref = "agentmonitors.sources.api_poll.config:ApiPollConfig"
    # What it says about itself beyond observing (sources/traits.py).
    default_interval_ms = api_poll_traits.DEFAULT_INTERVAL_MS
    baseline_notes = api_poll_traits.BASELINE_NOTES
    scaffold = staticmethod(api_poll_traits.scaffold)
    baseline_summary = staticmethod(api_poll_traits.baseline_summary)

    def approval(self, config: Mapping[str, Any], workspace: str) -> Approval:
        del workspace
        return api_poll_traits.approval(self.observed_config(config, plain_config))

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """Fetch the URL (or every composite part) once and compare with the last state.

        Raises with a redacted, author-facing message on an invalid config, a missing
        token variable, a transport failure, a timeout, an oversized body or a non-2xx
        answer under a body strategy; the runtime then keeps the stored baseline.
        """
        parsed = self.observed_config(config, plain_config)
        request = _request_for(parsed, context.permit)
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
    # What this monitor may send, and where: checked by every request (sources/permit.py).
    permit: Permit = WORKSPACE_ONLY
    # The variables whose values the requests carry (auth.token-env).
    secret_env: tuple[str, ...] = ()


def _request_for(config: ApiPollSettings, permit: Permit) -> _Request:
    headers, secrets = _auth_headers(config.auth)
    for name, value in (config.headers or {}).items():
        # Authored headers come after auth: an explicit Authorization wins.
        for existing in [key for key in headers if key.lower() == name.lower()]:
            del headers[existing]
        headers[name] = value
        if is_sensitive_name(name):
            secrets.append(value)
    auth = config.auth
    secret_env = (auth.token_env,) if auth is not None and auth.token_env else ()
    return _Request(
        config.method, headers, duration_ms(config.timeout), secrets, permit, secret_env
    )


def _auth_headers(auth: AuthSettings | None) -> tuple[dict[str, str], list[str]]:
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
    detection: ApiChangeDetectionSettings | None,
    context: ObservationContext,
) -> ObservationResult:
    explicit = detection.strategy if detection is not None else None
    collection = detection.collection if detection is not None else None
    shown = display_url(url)
    identity = redact_url(url)
    previous = context.previous_state if isinstance(context.previous_state, Mapping) else None
    headers = _conditional_headers(request.headers, previous)
    async with open_client(request.timeout_ms) as client:
        response = await fetch(
            client,
            url,
            method=request.method,
            headers=headers,
            timeout_ms=request.timeout_ms,
            read_body=explicit != "status-code",
            secrets=request.secrets,
            permit=request.permit,
            secret_env=request.secret_env,
        )
    if response.status == 304 and previous is not None and headers is not request.headers:
        # Not modified since the stored answer: an unchanged observation that cost the
        # endpoint no body (and, on many APIs, nothing of the rate limit).
        return ObservationResult(next_state=_with_validators(previous, response))
    strategy: Strategy = explicit or _inferred_strategy(response.content_type)
    if strategy != "status-code" and not response.ok:
        raise FetchError(
            f"api-poll received HTTP {response.status} from {shown} — check auth/url; "
            "not establishing a baseline on an error response"
        )
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
            next_state=_with_validators(
                {"body": body, "status": response.status, KEYED_SNAPSHOT_FIELD: items}, response
            ),
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
    # A first answer is kept as the snapshot the first change is diffed against.
    baselines = (
        [_response_observation(identity, shown, strategy, response)]
        if not _has_baseline(previous) and strategy != "status-code"
        else []
    )
    return ObservationResult(
        observations=observations,
        next_state=_with_validators(next_state, response),
        warnings=warnings,
        baselines=baselines,
    )


# The state keys of the validators a conditional request sends back.
_ETAG = "etag"
_LAST_MODIFIED = "lastModified"
_CONDITIONAL_HEADERS = {"if-none-match", "if-modified-since"}


def _conditional_headers(
    headers: dict[str, str], previous: Mapping[str, Any] | None
) -> dict[str, str]:
    """``headers`` plus ``If-None-Match``/``If-Modified-Since`` from the stored answer.

    Returns ``headers`` itself (the same object) when nothing is added: there is no
    stored answer, it had no validators, or the author set a conditional header.
    """
    if not _has_baseline(previous) or any(name.lower() in _CONDITIONAL_HEADERS for name in headers):
        return headers
    assert previous is not None
    added = dict(headers)
    etag, modified = previous.get(_ETAG), previous.get(_LAST_MODIFIED)
    if isinstance(etag, str) and etag:
        added["If-None-Match"] = etag
    if isinstance(modified, str) and modified:
        added["If-Modified-Since"] = modified
    return added if len(added) > len(headers) else headers


def _with_validators(state: Mapping[str, Any], response: FetchedResponse) -> dict[str, Any]:
    """``state`` with the response's ``ETag``/``Last-Modified`` (a 2xx or 304 only).

    A 304 may repeat or renew them; validators of an error answer are never kept, since
    a later 304 must mean "the answer already stored".
    """
    kept = dict(state)
    if not (response.ok or response.status == 304):
        kept.pop(_ETAG, None)
        kept.pop(_LAST_MODIFIED, None)
        return kept
    for key, value in ((_ETAG, response.etag), (_LAST_MODIFIED, response.last_modified)):
        if value:
            kept[key] = value
        elif response.status != 304:
            kept.pop(key, None)
    return kept


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
    request: _Request, composite: CompositeSettings, context: ObservationContext
) -> ObservationResult:
    rendered = await _render_composite(request, composite)
    previous = context.previous_state
    next_state = {"composite": rendered}
    if not isinstance(previous, Mapping) or not isinstance(previous.get("composite"), str):
        # The first rendering is kept as the snapshot the first change is diffed against.
        first = Observation(
            title=composite.title or f"Composite snapshot: {composite.object_key}",
            snapshot_text=rendered,
            snapshot={"objectKey": composite.object_key, "partCount": len(composite.parts)},
            object_key=composite.object_key,
        )
        return ObservationResult(next_state=next_state, baselines=[first])
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


async def _render_composite(request: _Request, composite: CompositeSettings) -> str:
    """Every part fetched (≤ 5 at once), rendered in ``id`` order; any failure fails all."""
    # Lazy: asyncio is a third of `validate`, which loads this module and fetches nothing.
    import asyncio

    gate = asyncio.Semaphore(MAX_COMPOSITE_CONCURRENCY)
    sections: dict[int, tuple[str, str]] = {}
    total = 0

    async def fetch_part(index: int, part: CompositePartSettings) -> None:
        nonlocal total
        async with gate:
            response = await fetch(
                client,
                part.url,
                method=request.method,
                headers=request.headers,
                timeout_ms=request.timeout_ms,
                secrets=request.secrets,
                permit=request.permit,
                secret_env=request.secret_env,
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

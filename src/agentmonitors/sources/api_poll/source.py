"""api-poll: an HTTP endpoint's response, compared as text, JSON or status code."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any

from agentmonitors.monitor.durations import duration_ms
from agentmonitors.sources.api_poll import traits as api_poll_traits
from agentmonitors.sources.api_poll.composite import observe_composite
from agentmonitors.sources.api_poll.http_fetch import (
    FetchedResponse,
    FetchError,
    fetch,
    open_client,
)
from agentmonitors.sources.api_poll.plain import (
    ApiChangeDetectionSettings,
    ApiPollSettings,
    AuthSettings,
    Strategy,
    plain_config,
)
from agentmonitors.sources.api_poll.request import Request, conditional_headers, with_validators
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
from agentmonitors.sources.permit import Permit
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
            return await observe_composite(request, detection.composite, context)
        assert parsed.url is not None  # the model requires it outside composite mode
        return await _observe_url(request, parsed.url, detection, context)


# --- observe ------------------------------------------------------------------------


def _request_for(config: ApiPollSettings, permit: Permit) -> Request:
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
    return Request(config.method, headers, duration_ms(config.timeout), secrets, permit, secret_env)


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
    request: Request,
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
        return ObservationResult(next_state=with_validators(previous, response))
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
            next_state=with_validators(
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
        next_state=with_validators(next_state, response),
        warnings=warnings,
        baselines=baselines,
    )


def _conditional_headers(
    headers: dict[str, str], previous: Mapping[str, Any] | None
) -> dict[str, str]:
    """``conditional_headers`` from the stored answer, once there is one."""
    return conditional_headers(headers, previous if _has_baseline(previous) else None)


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

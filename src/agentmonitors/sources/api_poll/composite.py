"""api-poll's composite mode: several part URLs rendered as one snapshot, in ``id`` order.

Each part is asked conditionally: the state keeps, per part id, the validators of its
last answer, its body and a digest of its URL, so a 304 is that part unchanged and its
stored body is rendered again. A part whose server gives no validators keeps nothing
beyond the rendering.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from agentmonitors.sources.api_poll.http_fetch import FetchError, fetch, open_client
from agentmonitors.sources.api_poll.plain import (
    MAX_COMPOSITE_BYTES,
    MAX_COMPOSITE_CONCURRENCY,
    CompositePartSettings,
    CompositeSettings,
)
from agentmonitors.sources.api_poll.request import (
    ETAG,
    LAST_MODIFIED,
    Request,
    conditional_headers,
    with_validators,
)
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.sources.redact import display_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The state key of each part's stored answer, by part id.
_PARTS = "parts"


async def observe_composite(
    request: Request, composite: CompositeSettings, context: ObservationContext
) -> ObservationResult:
    previous = context.previous_state
    rendered, parts = await _render_composite(request, composite, _stored_parts(previous))
    next_state: dict[str, Any] = {"composite": rendered}
    if parts:
        next_state[_PARTS] = parts
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


def _stored_parts(previous: object) -> dict[str, Mapping[str, Any]]:
    """Each part's stored answer by id, from a state that also holds the rendering."""
    if not isinstance(previous, Mapping) or not isinstance(previous.get("composite"), str):
        return {}
    parts = previous.get(_PARTS)
    if not isinstance(parts, Mapping):
        return {}
    return {
        key: value
        for key, value in parts.items()
        if isinstance(value, Mapping) and isinstance(value.get("body"), str)
    }


def _url_digest(url: str) -> str:
    # A digest, not the URL: a part URL may carry a token in its query.
    return hashlib.sha256(url.encode()).hexdigest()[:16]


async def _render_composite(
    request: Request, composite: CompositeSettings, stored: Mapping[str, Mapping[str, Any]]
) -> tuple[str, dict[str, dict[str, Any]]]:
    """Every part fetched (≤ 5 at once), rendered in ``id`` order, and what to keep of
    each for its next conditional request; any failure fails all."""
    # Lazy: asyncio is a third of `validate`, which loads this module and fetches nothing.
    import asyncio

    gate = asyncio.Semaphore(MAX_COMPOSITE_CONCURRENCY)
    sections: dict[int, tuple[str, str]] = {}
    kept: dict[str, dict[str, Any]] = {}
    total = 0

    async def fetch_part(index: int, part: CompositePartSettings) -> None:
        nonlocal total
        digest = _url_digest(part.url)
        answer = stored.get(part.id)
        # Validators stored for another URL under this id say nothing about this one.
        known = answer if answer is not None and answer.get("url") == digest else None
        headers = conditional_headers(request.headers, known)
        async with gate:
            response = await fetch(
                client,
                part.url,
                method=request.method,
                headers=headers,
                timeout_ms=request.timeout_ms,
                secrets=request.secrets,
                permit=request.permit,
                secret_env=request.secret_env,
            )
        if response.status == 304 and known is not None and headers is not request.headers:
            body: str = known["body"]
        elif response.ok:
            body = response.body
        else:
            raise FetchError(
                f'api-poll received HTTP {response.status} from composite part "{part.id}" '
                f"({display_url(part.url)}) — check auth/url; not establishing a baseline on "
                "an error response"
            )
        total += len(_section(part.id, body).encode())
        if total > MAX_COMPOSITE_BYTES:
            raise FetchError(
                f'api-poll composite "{composite.object_key}" exceeded the '
                f"{MAX_COMPOSITE_BYTES}-byte cumulative rendered-artifact budget after part "
                f'"{part.id}" ({total} bytes so far) — reduce the number or size of parts '
                "or split the monitor"
            )
        sections[index] = (part.id, body)
        validators = with_validators(known or {}, response)
        if validators.get(ETAG) or validators.get(LAST_MODIFIED):
            kept[part.id] = {**validators, "url": digest, "body": body}

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
    return rendered, kept


def _section(part_id: str, body: str) -> str:
    return f"## {part_id}\n{body}"


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    if isinstance(first, BaseExceptionGroup):
        return _first_leaf(first)
    return first

"""What every request of one api-poll observation shares, and its conditional headers.

The single URL and each composite part send back the validators of the answer stored
for them (``ETag`` as ``If-None-Match``, ``Last-Modified`` as ``If-Modified-Since``),
so an unchanged endpoint answers 304 with no body.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.sources.permit import WORKSPACE_ONLY, Permit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentmonitors.sources.api_poll.http_fetch import FetchedResponse

# The state keys of the validators a conditional request sends back.
ETAG = "etag"
LAST_MODIFIED = "lastModified"
_CONDITIONAL_HEADERS = {"if-none-match", "if-modified-since"}


@dataclass(frozen=True)
class Request:
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


def conditional_headers(
    headers: dict[str, str], stored: Mapping[str, Any] | None
) -> dict[str, str]:
    """``headers`` plus ``If-None-Match``/``If-Modified-Since`` from ``stored`` validators.

    Returns ``headers`` itself (the same object) when nothing is added: nothing is
    stored, it had no validators, or the author set a conditional header.
    """
    if stored is None or any(name.lower() in _CONDITIONAL_HEADERS for name in headers):
        return headers
    added = dict(headers)
    etag, modified = stored.get(ETAG), stored.get(LAST_MODIFIED)
    if isinstance(etag, str) and etag:
        added["If-None-Match"] = etag
    if isinstance(modified, str) and modified:
        added["If-Modified-Since"] = modified
    return added if len(added) > len(headers) else headers


def with_validators(state: Mapping[str, Any], response: FetchedResponse) -> dict[str, Any]:
    """``state`` with the response's ``ETag``/``Last-Modified`` (a 2xx or 304 only).

    A 304 may repeat or renew them; validators of an error answer are never kept, since
    a later 304 must mean "the answer already stored".
    """
    kept = dict(state)
    if not (response.ok or response.status == 304):
        kept.pop(ETAG, None)
        kept.pop(LAST_MODIFIED, None)
        return kept
    for key, value in ((ETAG, response.etag), (LAST_MODIFIED, response.last_modified)):
        if value:
            kept[key] = value
        elif response.status != 304:
            kept.pop(key, None)
    return kept

"""One bounded HTTP request: a single deadline, a body cap, and redacted errors.

:func:`fetch` sends one request through an ``httpx2.AsyncClient`` (see
:func:`open_client`) and returns the status, the decoded body and the Content-Type.

* **One deadline** covers connect, headers and the whole body: a server that answers
  slowly, or trickles its body, fails with ``<label> request to <url> timed out after
  <ms>ms`` whichever phase it was in.
* **Body cap** (:data:`MAX_RESPONSE_BYTES`): a declared ``Content-Length`` over the cap
  is refused before reading; the streamed count is the authority (a missing or lying
  Content-Length cannot get past it). Nothing is ever truncated and kept.
* ``read_body=False`` never reads the body (status-code monitors): no cap applies.
* Every failure is a :class:`FetchError` whose message names the URL in its display
  form (no userinfo, query or fragment) and has known secrets masked.
* **Approval**: every request, redirect hops included, is checked against the
  monitor's permit here, the one place a request is sent (``sources/permit.py``).
  Redirects are followed only within the origin of the first request, so an approved
  endpoint cannot bounce the request (and its credentials) to another host.
"""

from __future__ import annotations

import codecs
import errno
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.api_poll.plain import MAX_RESPONSE_BYTES
from agentmonitors.sources.permit import Permit, origin_of
from agentmonitors.sources.redact import display_url, redact_text, url_secrets

if TYPE_CHECKING:
    import ssl

    import httpx2

# Hops of a redirect chain followed within one origin (a browser's order of magnitude).
MAX_REDIRECTS: Final = 10


# The TLS context every client shares, made by the first: loading the trust store costs
# about 20 ms of CPU, which a client of its own paid on every poll of every monitor.
_TLS: list[ssl.SSLContext] = []


class FetchError(Exception):
    """A request that failed; the message is safe to store, log and show."""


@dataclass(frozen=True)
class FetchedResponse:
    status: int
    body: str
    content_type: str | None
    # Bytes of the body as received (0 when it was not read).
    size: int = 0
    # The validators a later conditional request sends back (None: the server gave none).
    etag: str | None = None
    last_modified: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def open_client(timeout_ms: int) -> httpx2.AsyncClient:
    """A client for a batch of :func:`fetch` calls; use it as ``async with``.

    Redirects are followed by :func:`fetch` itself, hop by hop, each checked; the
    client never follows one on its own. The HTTP stack's loggers get a filter that
    masks credentials in what they log.
    """
    # Lazy: httpx2 costs 60 ms (and logging, under the filter, 5 ms); validate and
    # doctor load this module but never fetch.
    import httpx2

    from agentmonitors.sources.api_poll.http_log import install_log_filter

    install_log_filter()
    if not _TLS:
        _TLS.append(httpx2.create_ssl_context())

    return httpx2.AsyncClient(
        follow_redirects=False,
        # Our own deadline is the authority; the transport's is a backstop.
        timeout=httpx2.Timeout(timeout_ms / 1000 + 1),
        verify=_TLS[0],
    )


async def fetch(
    client: httpx2.AsyncClient,
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    timeout_ms: int,
    read_body: bool = True,
    max_bytes: int = MAX_RESPONSE_BYTES,
    secrets: Iterable[str] = (),
    label: str = "api-poll",
    permit: Permit,
    secret_env: Iterable[str] = (),
) -> FetchedResponse:
    """One request under one ``timeout_ms`` deadline and the ``max_bytes`` cap.

    ``permit`` must allow ``url``'s origin and sending the values of ``secret_env``
    (``NotApproved`` otherwise, before anything is sent).
    """
    # Lazy: as in ``open_client``; the client passed in has loaded it already (and
    # asyncio with it: validate loads this module and never needs either).
    import asyncio

    import httpx2

    from agentmonitors.sources.api_poll.http_log import LOG_FILTER

    permit.check_request(url, secret_env)
    shown = display_url(url)
    known = [*secrets, *url_secrets(url)]
    try:
        with LOG_FILTER.masking(known):
            async with asyncio.timeout(timeout_ms / 1000):
                return await _send(
                    client, url, method, dict(headers or {}), read_body, max_bytes, shown, label
                )
    except TimeoutError:
        raise FetchError(f"{label} request to {shown} timed out after {timeout_ms}ms") from None
    except httpx2.TimeoutException:
        raise FetchError(f"{label} request to {shown} timed out after {timeout_ms}ms") from None
    except (httpx2.InvalidURL, httpx2.UnsupportedProtocol) as error:
        detail = redact_text(_describe(error), known)
        raise FetchError(f"{label} cannot request {shown}: {detail}") from None
    except httpx2.RequestError as error:
        detail = redact_text(_describe(error), known)
        raise FetchError(f"{label} request to {shown} failed: {detail}") from None
    except UnicodeError as error:
        detail = redact_text(_describe(error), known)
        raise FetchError(f"{label} cannot send the request to {shown}: {detail}") from None


async def _send(
    client: httpx2.AsyncClient,
    url: str,
    method: str,
    headers: dict[str, str],
    read_body: bool,
    max_bytes: int,
    shown: str,
    label: str,
) -> FetchedResponse:
    origin = origin_of(url)
    for _hop in range(MAX_REDIRECTS + 1):
        async with client.stream(method, url, headers=headers) as response:
            target = _redirect_target(response)
            if target is None:
                return await _read(response, read_body, max_bytes, shown, label)
        if origin_of(target) != origin:
            raise FetchError(
                f"{label} request to {shown} was redirected to {display_url(target)}, outside "
                f"the approved origin {origin}; redirects are followed only within it"
            )
        if response.status_code == 303 or (
            response.status_code in (301, 302) and method not in ("GET", "HEAD")
        ):
            method = "GET"
        url = target
    raise FetchError(f"{label} request to {shown} was redirected more than {MAX_REDIRECTS} times")


def _redirect_target(response: httpx2.Response) -> str | None:
    """The absolute URL a 3xx answer with a ``Location`` points to, or None."""
    if not (300 <= response.status_code < 400) or response.status_code == 304:
        return None
    location = response.headers.get("location")
    if not location:
        return None
    return str(response.url.join(location))


async def _read(
    response: httpx2.Response, read_body: bool, max_bytes: int, shown: str, label: str
) -> FetchedResponse:
    content_type = response.headers.get("content-type")
    etag = response.headers.get("etag")
    last_modified = response.headers.get("last-modified")
    if not read_body or response.status_code == 304:
        # A 304 has no body by definition: the caller keeps the one it has.
        return FetchedResponse(
            response.status_code, "", content_type, etag=etag, last_modified=last_modified
        )
    declared = _content_length(response.headers.get("content-length"))
    if declared is not None and declared > max_bytes:
        raise FetchError(
            f"{label} response from {shown} declares Content-Length {declared} bytes, "
            f"exceeding the {max_bytes}-byte cap"
        )
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > max_bytes:
            raise FetchError(
                f"{label} response from {shown} streamed {total} bytes, "
                f"exceeding the {max_bytes}-byte cap"
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    return FetchedResponse(
        response.status_code,
        data.decode(_encoding(response.charset_encoding), errors="replace"),
        content_type,
        total,
        etag,
        last_modified,
    )


def _content_length(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.split(",")[0].strip())
    except ValueError:
        return None


def _encoding(declared: str | None) -> str:
    if declared:
        try:
            return codecs.lookup(declared).name
        except LookupError:
            pass
    return "utf-8"


def _describe(error: BaseException) -> str:
    """The error with its root causes, for a message that says what really failed."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip() or type(current).__name__
        code = current.errno if isinstance(current, OSError) else None
        if isinstance(code, int) and code > 0 and os.strerror(code) not in text:
            text += f" ({errno.errorcode.get(code, code)}: {os.strerror(code)})"
        if text not in parts:
            parts.append(text)
        current = current.__cause__ or current.__context__
    return ": ".join(parts)

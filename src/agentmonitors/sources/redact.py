"""Keeping credentials out of what we store, log and deliver.

``redact_text(text)`` (also for command-poll's stderr tails) masks credentials that
show in free text: URL userinfo, credential-looking query parameters, ``Bearer``/
``Basic`` values and ``token=…``/``password: …`` pairs; pass ``secrets`` to mask
known values wherever they appear.

For URLs there are two forms:

* :func:`redact_url` – an identity that is safe to store: userinfo dropped, the
  values of credential-looking query (and fragment) parameters replaced by
  ``REDACTED``; a URL without either comes back unchanged.
* :func:`display_url` – for titles, warnings and errors: scheme, host, port and path
  only (no userinfo, query or fragment).

An unparseable URL becomes :data:`UNPARSEABLE_URL` in both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

UNPARSEABLE_URL: Final = "[unparseable url redacted]"
REDACTED: Final = "[redacted]"
URL_REDACTED_VALUE: Final = "REDACTED"
# Known secret values shorter than this are not masked in free text: masking "a" or
# "12" would shred the message and protect nothing.
MIN_SECRET_LENGTH: Final = 4

_SENSITIVE_NAME = re.compile(
    r"token|key|secret|passw|pwd|signature|credential|auth|session|cookie|bearer|jwt",
    re.IGNORECASE,
)
_SENSITIVE_EXACT = frozenset({"sig", "pass", "code", "sas", "x-amz-security-token"})
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
# Credentials are long: "Bearer auth requires a token" must survive intact.
_SCHEME_AUTH = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_PAIR = re.compile(
    r"(?P<name>[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d?|pwd|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|signature|credential|authorization|cookie|session)"
    r"[A-Za-z0-9_.-]*)"
    r"(?P<sep>\"?\s*[:=]\s*\"?)"
    r"(?P<value>[^\s\"',;&]+)",
    re.IGNORECASE,
)


def is_sensitive_name(name: str) -> bool:
    """Whether a header or query-parameter name suggests it carries a credential."""
    lowered = name.strip().lower()
    return lowered in _SENSITIVE_EXACT or _SENSITIVE_NAME.search(lowered) is not None


def redact_url(url: str) -> str:
    """``url`` minus userinfo, with credential-looking parameter values masked."""
    parts = _split(url)
    if parts is None:
        return UNPARSEABLE_URL
    query, query_changed = _mask_params(parts.query)
    fragment, fragment_changed = _mask_params(parts.fragment)
    userinfo = "@" in parts.netloc
    if not (userinfo or query_changed or fragment_changed):
        return url
    return urlunsplit((parts.scheme, _host_port(parts), parts.path, query, fragment))


def display_url(url: str) -> str:
    """``url`` as titles, warnings and errors show it: no userinfo, query or fragment."""
    parts = _split(url)
    if parts is None:
        return UNPARSEABLE_URL
    return urlunsplit((parts.scheme, _host_port(parts), parts.path or "/", "", ""))


def url_secrets(url: str) -> list[str]:
    """The credential values a URL carries (userinfo and sensitive parameters)."""
    parts = _split(url)
    if parts is None:
        return []
    found: list[str] = []
    if parts.username:
        found.append(parts.username)
    if parts.password:
        found.append(parts.password)
    for raw in (parts.query, parts.fragment):
        for name, value in parse_qsl(raw, keep_blank_values=True):
            if value and is_sensitive_name(name):
                found.append(value)
    return found


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials masked: known ``secrets``, URL credentials,
    ``Bearer …`` values and ``token=…``-style pairs."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len)[::-1]:
        text = text.replace(secret, REDACTED)
    text = _URL_IN_TEXT.sub(_redact_url_match, text)
    text = _SCHEME_AUTH.sub(lambda match: f"{match.group(1)} {REDACTED}", text)
    return _PAIR.sub(_redact_pair, text)


def _redact_url_match(match: re.Match[str]) -> str:
    found = match.group(0)
    redacted = redact_url(found)
    return found if redacted == UNPARSEABLE_URL else redacted


def _redact_pair(match: re.Match[str]) -> str:
    value = match.group("value")
    if value in (REDACTED, URL_REDACTED_VALUE) or value.startswith("["):
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{REDACTED}"


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    return parts


def _host_port(parts: SplitResult) -> str:
    return parts.netloc.rpartition("@")[2]


def _mask_params(raw: str) -> tuple[str, bool]:
    if not raw or "=" not in raw:
        return raw, False
    pairs = parse_qsl(raw, keep_blank_values=True)
    if not any(is_sensitive_name(name) for name, _ in pairs):
        return raw, False
    masked = [
        (name, URL_REDACTED_VALUE if is_sensitive_name(name) else value) for name, value in pairs
    ]
    return urlencode(masked), True

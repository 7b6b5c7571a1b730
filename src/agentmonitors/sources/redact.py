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

:func:`config_credentials` finds the credentials a ``watch`` block itself holds (a
URL's userinfo, a value under a credential-looking name such as an ``env`` entry
``GITHUB_TOKEN`` or ``auth.password``, a string shaped like a known token): the
compiled-definition cache does not keep such a block, and an agent's declaration
carrying one is refused (docs/architecture.md, "Secrets"). :func:`is_sensitive_name`
is the one definition of a credential-looking name, for headers, query parameters,
config keys and environment variables alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
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
# Config keys whose value names something rather than holding it: an object's identity,
# or the environment variable a credential is read from (``auth.token-env``).
_NAMING_KEYS = frozenset({"key", "object-key", "object_key"})
_NAMING_SUFFIXES = ("-env", "_env")
# Strings shaped like the credentials of common services, whatever they are called.
_TOKEN_SHAPE = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
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


def looks_like_credential(text: str) -> bool:
    """Whether ``text`` holds something shaped like a credential, whatever its name: a
    known service's token, a private key, a ``Bearer``/``Basic`` value, a URL's userinfo
    or credential parameter."""
    if _TOKEN_SHAPE.search(text) or _SCHEME_AUTH.search(text):
        return True
    return any(url_secrets(match.group(0)) for match in _URL_IN_TEXT.finditer(text))


def config_credentials(value: Any, where: str = "") -> list[str]:
    """Where a config block (a ``watch`` block, a declared scope) holds a credential,
    as paths such as ``env.GITHUB_TOKEN``, ``url`` or ``command[2]``; [] when nowhere.

    A credential is a non-empty string under a credential-looking name (except names
    that only name one: ``key``, ``token-env``), or any string that
    :func:`looks_like_credential`.
    """
    found: list[str] = []
    if isinstance(value, Mapping):
        for name, item in value.items():
            path = f"{where}.{name}" if where else str(name)
            if isinstance(item, str) and item and _credential_name(str(name)):
                found.append(path)
            else:
                found += config_credentials(item, path)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found += config_credentials(item, f"{where}[{index}]")
    elif isinstance(value, str) and looks_like_credential(value):
        found.append(where or "value")
    return found


def _credential_name(name: str) -> bool:
    lowered = name.strip().lower()
    if lowered in _NAMING_KEYS or lowered.endswith(_NAMING_SUFFIXES):
        return False
    return is_sensitive_name(lowered)


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

"""api-poll's watch block as observing reads it: limits, URL rule, standard-library reading.

The pydantic models in ``api_poll/config.py`` validate and describe the block; this
module holds what both sides share (the limits and the URL rule) and reads a validated
block into :class:`ApiPollSettings` without them (see ``plain_config.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources import plain_config as plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Literal

MAX_COMPOSITE_PARTS = 50
MAX_PART_ID_LENGTH = 256
MAX_COMPOSITE_CONCURRENCY: Final = 5
# A response body is read up to this many bytes (http_fetch.py enforces it).
MAX_RESPONSE_BYTES: Final = 10 * 1024 * 1024
MAX_COMPOSITE_BYTES: Final = MAX_RESPONSE_BYTES
if TYPE_CHECKING:
    Strategy = Literal["json-diff", "text-diff", "status-code"]
_ALIASES = {"Strategy": ("json-diff", "text-diff", "status-code")}
STRATEGIES: tuple[Strategy, ...] = ("json-diff", "text-diff", "status-code")


def http_url_problem(text: str) -> str | None:
    """Why ``text`` is not an absolute http(s) URL with a host, or None when it is one."""
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


@dataclass(frozen=True)
class AuthSettings:
    type: str
    token: str | None = None
    token_env: str | None = None
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class CompositePartSettings:
    id: str
    url: str


@dataclass(frozen=True)
class CompositeSettings:
    object_key: str
    title: str | None
    parts: list[CompositePartSettings]


@dataclass(frozen=True)
class ApiChangeDetectionSettings:
    strategy: Strategy | None = None
    collection: plain.CollectionSettings | None = None
    composite: CompositeSettings | None = None


@dataclass(frozen=True)
class ApiPollSettings:
    """A validated watch block as observing reads it (the model's values, standard library)."""

    change_detection: ApiChangeDetectionSettings | None
    url: str | None
    method: str
    headers: dict[str, str] | None
    auth: AuthSettings | None
    timeout: str
    interval: str


def _url(value: Any) -> str:
    url = plain.non_blank(value)
    if http_url_problem(url) is not None:
        raise plain.Unexpected
    return url


def _strategy(value: Any) -> Strategy | None:
    if value is None:
        return None
    for strategy in STRATEGIES:
        if type(value) is str and value == strategy:
            return strategy
    raise plain.Unexpected


def _part(value: Any) -> CompositePartSettings:
    config = plain.block(value)
    if "id" not in config or "url" not in config:
        raise plain.Unexpected
    part_id = plain.non_empty(config["id"])
    if len(part_id) > MAX_PART_ID_LENGTH:
        raise plain.Unexpected
    return CompositePartSettings(id=part_id, url=_url(plain.non_empty(config["url"])))


def _composite(value: Any) -> CompositeSettings:
    config = plain.block(value)
    if "object_key" in config or "object-key" not in config or "parts" not in config:
        raise plain.Unexpected
    parts = config["parts"]
    if type(parts) is not list or not 1 <= len(parts) <= MAX_COMPOSITE_PARTS:
        raise plain.Unexpected
    return CompositeSettings(
        object_key=plain.non_blank(config["object-key"]),
        title=plain.absent_as(config, "title", None, plain.optional_text),
        parts=[_part(part) for part in parts],
    )


def _change_detection(value: Any) -> ApiChangeDetectionSettings | None:
    if value is None:
        return None
    config = plain.block(value)
    strategy = _strategy(config.get("strategy"))
    collection = config.get("collection")
    composite = config.get("composite")
    if collection is not None and (strategy != "json-diff" or composite is not None):
        raise plain.Unexpected
    return ApiChangeDetectionSettings(
        strategy=strategy,
        collection=None if collection is None else plain.collection(collection, closed=False),
        composite=None if composite is None else _composite(composite),
    )


def _auth(value: Any) -> AuthSettings | None:
    if value is None:
        return None
    config = plain.block(value)
    if "token_env" in config or "type" not in config:
        raise plain.Unexpected
    auth = AuthSettings(
        type=plain.one_of("bearer", "basic")(config["type"]),
        token=plain.absent_as(config, "token", None, plain.optional_text),
        token_env=plain.absent_as(config, "token-env", None, plain.optional_text),
        username=plain.absent_as(config, "username", None, plain.optional_text),
        password=plain.absent_as(config, "password", None, plain.optional_text),
    )
    if auth.type == "bearer" and not (auth.token or auth.token_env):
        raise plain.Unexpected
    return auth


def plain_config(config: Mapping[str, Any]) -> ApiPollSettings:
    """``config`` read without its model; ``Unexpected`` for anything unsure."""
    config = plain.block(config)
    if "change_detection" in config:
        raise plain.Unexpected
    detection = plain.absent_as(config, "change-detection", None, _change_detection)
    url = config.get("url")
    if url is None and (detection is None or detection.composite is None):
        raise plain.Unexpected
    return ApiPollSettings(
        change_detection=detection,
        url=None if url is None else _url(url),
        method=plain.absent_as(config, "method", "GET", plain.one_of("GET", "POST")),
        headers=plain.absent_as(config, "headers", None, plain.optional_string_map),
        auth=plain.absent_as(config, "auth", None, _auth),
        timeout=plain.absent_as(config, "timeout", "30s", plain.timeout),
        interval=plain.absent_as(config, "interval", "5m", plain.duration),
    )


def __getattr__(name: str) -> object:
    """The typing aliases, for a module that reads one at run time (a pydantic model)."""
    if name in _ALIASES:
        # Lazy: typing costs a short command (``validate``) more than a millisecond,
        # and only annotations name these aliases on its path.
        from typing import Literal

        alias: object = Literal[_ALIASES[name]]
        globals()[name] = alias
        return alias
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""A parsed monitor as plain data: what the runtime reads once a MONITOR.md is valid.

The pydantic model in ``monitor/model.py`` validates an authored frontmatter and
produces these frozen dataclasses; everything after parsing (the tick, pacing,
shaping, explain, the compiled-definition cache) reads them. Standard library only, so
a definition restored from the cache needs neither pydantic nor a YAML parser
(docs/architecture.md, "Compiled definitions").

Each policy block turns back into the dict its author wrote (kebab-case keys, absent
values left out, keys in the model's order): that dict is what ``scan``, ``explain``
and the stored notify state show, and what the cache stores.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.durations import duration_ms, is_duration, is_window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple

    UrgencyLevel = Literal["low", "normal", "high"]
    BaselineStrategy = Literal["net", "incremental"]

    class _Band(NamedTuple):
        lo: UrgencyLevel
        hi: UrgencyLevel

else:
    # typing.NamedTuple makes this same class; typing stays off a short command's path.
    _Band = namedtuple("UrgencyBand", ("lo", "hi"))

_ALIASES = {"UrgencyLevel": ("low", "normal", "high"), "BaselineStrategy": ("net", "incremental")}
URGENCY_LEVELS: tuple[UrgencyLevel, ...] = ("low", "normal", "high")
URGENCY_RANK = {level: rank for rank, level in enumerate(URGENCY_LEVELS)}
Path = tuple[str | int, ...]


class UrgencyBand(_Band):
    """The range an observation's urgency may take; a bare level is ``x..x``."""

    __slots__ = ()

    def clamp(self, salience: str | None) -> UrgencyLevel:
        """Effective urgency: the source's salience (default: the low bound), clamped."""
        wanted = salience if salience in URGENCY_RANK else self.lo
        rank = min(max(URGENCY_RANK[wanted], URGENCY_RANK[self.lo]), URGENCY_RANK[self.hi])
        return URGENCY_LEVELS[rank]

    def __str__(self) -> str:
        return self.lo if self.lo == self.hi else f"{self.lo}..{self.hi}"


DEFAULT_URGENCY = UrgencyBand("normal", "normal")


def parse_urgency_band(raw: str) -> UrgencyBand:
    """Parse ``normal`` or ``lo..hi``; ``ValueError`` carries the author-facing reason."""
    text = raw.strip()
    parts = [part.strip() for part in text.split("..")] if ".." in text else [text, text]
    if len(parts) != 2:
        raise ValueError(
            'urgency must be a single level (e.g. "normal") or a range "lo..hi" '
            '(e.g. "normal..high")'
        )
    lo, hi = parts
    if lo not in URGENCY_RANK or hi not in URGENCY_RANK:
        raise ValueError('urgency bounds must each be one of "low", "normal", "high"')
    if URGENCY_RANK[lo] > URGENCY_RANK[hi]:
        raise ValueError(
            f'range "{lo}..{hi}" is inverted — the low bound must not exceed the high bound'
        )
    return UrgencyBand(lo, hi)


def _is_kebab(value: object) -> bool:
    """``^[a-z][a-z0-9-]*$``, as the model's ``watch.type`` rule."""
    return (
        isinstance(value, str)
        and value[:1].isascii()
        and value[:1].islower()
        and all(char in _KEBAB_CHARS for char in value)
    )


_KEBAB_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def _duration(value: object) -> str:
    if not is_duration(value):
        raise ValueError(f"{value!r} is not a duration")
    return str(value)


# --------------------------------------------------------------------------- notify


@dataclass(frozen=True)
class DebouncePolicy:
    """Hold observations until none has arrived for ``settle_for``, then emit the batch."""

    settle_for: str
    strategy: Literal["debounce"] = "debounce"

    def as_authored(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "settle-for": self.settle_for}


@dataclass(frozen=True)
class ThrottlePolicy:
    """Emit the first observation, then drop the rest for ``suppress_for``."""

    suppress_for: str
    strategy: Literal["throttle"] = "throttle"

    def as_authored(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "suppress-for": self.suppress_for}


@dataclass(frozen=True)
class RollupPolicy:
    """Accumulate observations and emit them when the ``window`` cron fires."""

    window: str
    timezone: str | None = None
    strategy: Literal["rollup"] = "rollup"

    def as_authored(self) -> dict[str, Any]:
        authored: dict[str, Any] = {"strategy": self.strategy, "window": self.window}
        if self.timezone is not None:
            authored["timezone"] = self.timezone
        return authored


NotifyPolicy = DebouncePolicy | ThrottlePolicy | RollupPolicy


def notify_from_authored(data: Mapping[str, Any]) -> NotifyPolicy:
    """A notify block already known to be valid (from the model or the cache)."""
    strategy = data["strategy"]
    if strategy == "debounce":
        return DebouncePolicy(_duration(data["settle-for"]))
    if strategy == "throttle":
        return ThrottlePolicy(_duration(data["suppress-for"]))
    if strategy == "rollup":
        timezone = data.get("timezone")
        return RollupPolicy(str(data["window"]), None if timezone is None else str(timezone))
    raise ValueError(f"unknown notify strategy {strategy!r}")


# --------------------------------------------------------------------------- shape, payload


@dataclass(frozen=True)
class DerivePolicy:
    """A fact named ``name`` that holds when the CEL predicate ``when`` is true."""

    name: str
    when: str


@dataclass(frozen=True)
class ShapePolicy:
    derive: tuple[DerivePolicy, ...] | None = None
    render: Literal["rendered"] | None = None

    def as_authored(self) -> dict[str, Any]:
        authored: dict[str, Any] = {}
        if self.derive is not None:
            authored["derive"] = [{"name": rule.name, "when": rule.when} for rule in self.derive]
        if self.render is not None:
            authored["render"] = self.render
        return authored

    @classmethod
    def from_authored(cls, data: Mapping[str, Any]) -> ShapePolicy:
        derive = data.get("derive")
        return cls(
            None
            if derive is None
            else tuple(DerivePolicy(str(rule["name"]), str(rule["when"])) for rule in derive),
            "rendered" if data.get("render") == "rendered" else None,
        )


@dataclass(frozen=True)
class TransformPolicy:
    language: Literal["jq", "cel"]
    expression: str


PAYLOAD_FORMS = ("prose", "structured", "artifact", "rendered")
PAYLOAD_ENCODINGS = (None, "json", "yaml", "toon", "toml")


@dataclass(frozen=True)
class PayloadPolicy:
    form: Literal["prose", "structured", "artifact", "rendered"]
    transform: TransformPolicy | None = None
    encoding: Literal["json", "yaml", "toon", "toml"] | None = None

    def as_authored(self) -> dict[str, Any]:
        authored: dict[str, Any] = {"form": self.form}
        if self.transform is not None:
            authored["transform"] = {
                "language": self.transform.language,
                "expression": self.transform.expression,
            }
        if self.encoding is not None:
            authored["encoding"] = self.encoding
        return authored

    @classmethod
    def from_authored(cls, data: Mapping[str, Any]) -> PayloadPolicy:
        transform = data.get("transform")
        if data["form"] not in PAYLOAD_FORMS or data.get("encoding") not in PAYLOAD_ENCODINGS:
            raise ValueError("unknown payload form or encoding")
        if transform is not None and transform["language"] not in ("jq", "cel"):
            raise ValueError("unknown transform language")
        return cls(
            data["form"],
            None
            if transform is None
            else TransformPolicy(transform["language"], str(transform["expression"])),
            data.get("encoding"),
        )


# --------------------------------------------------------------------------- expect


@dataclass(frozen=True)
class ExpectPolicy:
    """What the monitor's subject is expected to do: change at least every
    ``change_within``, or its silence is news (docs/architecture.md, "Liveness")."""

    change_within: str

    @property
    def window_ms(self) -> int:
        return duration_ms(self.change_within)

    def as_authored(self) -> dict[str, Any]:
        return {"change-within": self.change_within}

    @classmethod
    def from_authored(cls, data: Mapping[str, Any]) -> ExpectPolicy:
        window = data["change-within"]
        if not is_window(window):
            raise ValueError("expect.change-within is not a window of a second or more")
        return cls(str(window))


# --------------------------------------------------------------------------- the monitor


@dataclass(frozen=True)
class WatchPolicy:
    """The runtime's part of the watch block; the source's part is ``watch_raw``."""

    type: str
    interval: str | None = None


@dataclass(frozen=True)
class MonitorPolicy:
    """Everything between the ``---`` lines of a valid MONITOR.md."""

    watch: WatchPolicy
    name: str | None = None
    urgency: UrgencyBand | None = None
    notify: NotifyPolicy | None = None
    baseline_strategy: BaselineStrategy = "net"
    shape: ShapePolicy | None = None
    payload: PayloadPolicy | None = None
    tags: tuple[str, ...] | None = None
    expect: ExpectPolicy | None = None

    @property
    def band(self) -> UrgencyBand:
        return self.urgency if self.urgency is not None else DEFAULT_URGENCY

    def as_authored(self) -> dict[str, Any]:
        """The policy as frontmatter keys (what the compiled-definition cache stores)."""
        watch: dict[str, Any] = {"type": self.watch.type}
        if self.watch.interval is not None:
            watch["interval"] = self.watch.interval
        authored: dict[str, Any] = {"watch": watch, "baseline-strategy": self.baseline_strategy}
        if self.name is not None:
            authored["name"] = self.name
        if self.urgency is not None:
            authored["urgency"] = [self.urgency.lo, self.urgency.hi]
        if self.notify is not None:
            authored["notify"] = self.notify.as_authored()
        if self.shape is not None:
            authored["shape"] = self.shape.as_authored()
        if self.payload is not None:
            authored["payload"] = self.payload.as_authored()
        if self.tags is not None:
            authored["tags"] = list(self.tags)
        if self.expect is not None:
            authored["expect"] = self.expect.as_authored()
        return authored

    @classmethod
    def from_authored(cls, data: Mapping[str, Any]) -> MonitorPolicy:
        """Rebuild what :meth:`as_authored` wrote; ``KeyError``/``TypeError``/``ValueError``
        when the data is not such a dict."""
        watch = data["watch"]
        urgency = data.get("urgency")
        notify = data.get("notify")
        shape = data.get("shape")
        payload = data.get("payload")
        tags = data.get("tags")
        expect = data.get("expect")
        strategy = data.get("baseline-strategy", "net")
        if strategy not in ("net", "incremental"):
            raise ValueError(f"unknown baseline strategy {strategy!r}")
        interval = watch.get("interval")
        name = data.get("name")
        # The model's value rules, as cheap checks: a damaged entry is refused rather
        # than run (tests/monitor/test_declarations.py holds them to the model).
        if not _is_kebab(watch["type"]):
            raise ValueError("watch.type is not a kebab-case source name")
        if interval is not None and not is_duration(interval):
            raise ValueError("watch.interval is not a duration")
        if name is not None and not (isinstance(name, str) and name.strip()):
            raise ValueError("name is not a non-blank string")
        if tags is not None and not all(isinstance(tag, str) for tag in tags):
            raise TypeError("tags are not strings")
        return cls(
            watch=WatchPolicy(str(watch["type"]), None if interval is None else str(interval)),
            name=name,
            urgency=None if urgency is None else parse_urgency_band("..".join(urgency)),
            notify=None if notify is None else notify_from_authored(notify),
            baseline_strategy=strategy,
            shape=None if shape is None else ShapePolicy.from_authored(shape),
            payload=None if payload is None else PayloadPolicy.from_authored(payload),
            tags=None if tags is None else tuple(str(tag) for tag in tags),
            expect=None if expect is None else ExpectPolicy.from_authored(expect),
        )


class LineTable:
    """Finds the file line of an authored key from a stored table of every key's line.

    It answers as the YAML lookup it was made from: the line of the deepest part of the
    path that exists, a missing key falling back to its parent's line.
    """

    def __init__(self, lines: Mapping[Path, int]) -> None:
        self._lines = dict(lines)

    def __call__(self, path: Path) -> int | None:
        line: int | None = None
        for depth in range(1, len(path) + 1):
            found = self._lines.get(path[:depth])
            if found is None:
                break
            line = found
        return line

    def as_json(self) -> list[list[Any]]:
        return [[list(path), line] for path, line in self._lines.items()]

    @classmethod
    def from_json(cls, data: Any) -> LineTable:
        return cls({tuple(path): int(line) for path, line in data})


@dataclass(frozen=True)
class MonitorDefinition:
    """One parsed monitor: its identity, policy (frontmatter) and instructions (body)."""

    id: str
    file_path: str
    frontmatter: MonitorPolicy
    body: str
    # The watch block exactly as authored (``type`` included).
    watch_raw: dict[str, Any]
    scope: Literal["project", "user"] | None = None
    warnings: tuple[str, ...] = field(default=())
    # Finds the file line of an authored key, for diagnostics found after parsing.
    lines: Callable[[Path], int | None] | None = field(default=None, compare=False, repr=False)

    @property
    def display_name(self) -> str:
        return self.frontmatter.name if self.frontmatter.name is not None else self.id

    @property
    def source_name(self) -> str:
        return self.frontmatter.watch.type

    @property
    def source_config(self) -> dict[str, Any]:
        """The watch block minus ``type``: what the source is configured with."""
        return {key: value for key, value in self.watch_raw.items() if key != "type"}

    @property
    def instructions(self) -> str:
        """The body with outer whitespace trimmed: the fallback event body."""
        return self.body.strip()

    def notify_as_authored(self) -> dict[str, Any] | None:
        notify = self.frontmatter.notify
        return None if notify is None else notify.as_authored()


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

"""The MONITOR.md frontmatter, modelled with pydantic.

Keys keep their authored kebab-case spelling as aliases. Validation is strict (YAML
``5`` is never silently a string) and every custom message is author-facing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from agentmonitors.monitor.expressions import cel_problem, jq_problem
from agentmonitors.monitor.fields import (
    CronExpression,
    Duration,
    TimeZone,
    fail,
    require_str,
)

UrgencyLevel = Literal["low", "normal", "high"]
URGENCY_LEVELS: tuple[UrgencyLevel, ...] = ("low", "normal", "high")
URGENCY_RANK = {level: rank for rank, level in enumerate(URGENCY_LEVELS)}
BaselineStrategy = Literal["net", "incremental"]
KEBAB_CASE = re.compile(r"^[a-z][a-z0-9-]*$")


class UrgencyBand(NamedTuple):
    """The range an observation's urgency may take; a bare level is ``x..x``."""

    lo: UrgencyLevel
    hi: UrgencyLevel

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


def _urgency(value: Any) -> UrgencyBand:
    text = require_str(value, 'an urgency level ("low", "normal", "high") or a "lo..hi" range')
    try:
        return parse_urgency_band(text)
    except ValueError as error:
        raise fail(str(error), "am_urgency") from error


Urgency = Annotated[
    UrgencyBand,
    PlainValidator(_urgency),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": "^\\s*(low|normal|high)(\\s*\\.\\.\\s*(low|normal|high))?\\s*$",
            "description": 'A level ("low", "normal", "high") or an escalation band '
            '"lo..hi" such as "normal..high".',
        }
    ),
]


class _Authored(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, populate_by_name=True)


# --------------------------------------------------------------------------- notify


class DebounceNotify(_Authored):
    """Hold observations until none has arrived for ``settle-for``, then emit the batch."""

    strategy: Literal["debounce"]
    settle_for: Duration = Field(alias="settle-for")


class ThrottleNotify(_Authored):
    """Emit the first observation, then drop the rest for ``suppress-for``."""

    strategy: Literal["throttle"]
    suppress_for: Duration = Field(alias="suppress-for")


class RollupNotify(_Authored):
    """Accumulate observations and emit them when the ``window`` cron fires."""

    strategy: Literal["rollup"]
    window: CronExpression
    timezone: TimeZone | None = None


Notify = Annotated[DebounceNotify | ThrottleNotify | RollupNotify, Field(discriminator="strategy")]


# --------------------------------------------------------------------------- shape, payload


class DeriveRule(_Authored):
    name: str = Field(json_schema_extra={"type": "string", "minLength": 1})
    when: str = Field(
        description="CEL predicate over the snapshot's fields and now (epoch ms).",
        json_schema_extra={"type": "string", "minLength": 1},
    )

    @field_validator("name", mode="plain")
    @classmethod
    def _name(cls, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise fail("shape.derive[].name must be non-empty", "am_name")
        return value

    @field_validator("when", mode="plain")
    @classmethod
    def _when(cls, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise fail("shape.derive[].when must be a CEL predicate", "am_when")
        problem = cel_problem(value)
        if problem is not None:
            raise fail(f"malformed CEL predicate: {problem}", "am_cel")
        return value


class Shape(_Authored):
    derive: list[DeriveRule] | None = None
    render: Literal["rendered"] | None = None


class PayloadTransform(_Authored):
    language: Literal["jq", "cel"]
    expression: str = Field(json_schema_extra={"type": "string", "minLength": 1})

    @field_validator("expression", mode="plain")
    @classmethod
    def _expression(cls, value: Any, info: ValidationInfo) -> str:
        text = require_str(value)
        if not text:
            raise fail("payload.transform.expression must be non-empty", "am_empty")
        language = info.data.get("language")
        problem = None
        if language == "jq":
            problem = jq_problem(text)
        elif language == "cel":
            problem = cel_problem(text)
        if problem is not None:
            raise fail(f"malformed {language} transform: {problem}", "am_transform")
        return text


class Payload(_Authored):
    form: Literal["prose", "structured", "artifact", "rendered"]
    transform: PayloadTransform | None = None
    encoding: Literal["json", "yaml", "toon", "toml"] | None = None

    @field_validator("transform")
    @classmethod
    def _transform_needs_structured(
        cls, value: PayloadTransform | None, info: ValidationInfo
    ) -> PayloadTransform | None:
        form = info.data.get("form")
        if value is not None and form is not None and form != "structured":
            raise fail('payload.transform is only valid when payload.form is "structured"')
        return value


# --------------------------------------------------------------------------- watch


class Watch(BaseModel):
    """What to observe: ``type`` names the source, every other key is its config."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    type: str = Field(
        description="The observation source, e.g. file-fingerprint.",
        json_schema_extra={"type": "string", "pattern": KEBAB_CASE.pattern},
    )
    interval: Duration | None = None

    @field_validator("type", mode="plain")
    @classmethod
    def _type(cls, value: Any) -> str:
        text = require_str(value, 'a source name such as "file-fingerprint"')
        if not KEBAB_CASE.fullmatch(text):
            raise fail("watch.type must be kebab-case", "am_kebab")
        return text


# --------------------------------------------------------------------------- frontmatter


def _name(value: Any) -> str:
    text = require_str(value)
    if not text:
        raise fail("Monitor name must be non-empty when present", "am_name")
    if not text.strip():
        raise fail("Monitor name must contain non-whitespace characters when present", "am_name")
    return text


MonitorName = Annotated[
    str, PlainValidator(_name), WithJsonSchema({"type": "string", "minLength": 1, "pattern": "\\S"})
]


class Frontmatter(_Authored):
    """Everything between the ``---`` lines of a MONITOR.md."""

    name: MonitorName | None = None
    watch: Watch
    urgency: Urgency | None = None
    notify: Notify | None = None
    baseline_strategy: BaselineStrategy = Field(default="net", alias="baseline-strategy")
    shape: Shape | None = None
    payload: Payload | None = None
    tags: list[str] | None = None

    @property
    def band(self) -> UrgencyBand:
        return self.urgency if self.urgency is not None else DEFAULT_URGENCY


@dataclass(frozen=True)
class MonitorDefinition:
    """One parsed monitor: its identity, policy (frontmatter) and instructions (body)."""

    id: str
    file_path: str
    frontmatter: Frontmatter
    body: str
    # The watch block exactly as authored (``type`` included).
    watch_raw: dict[str, Any]
    scope: Literal["project", "user"] | None = None
    warnings: tuple[str, ...] = field(default=())
    # Finds the file line of an authored key, for diagnostics found after parsing.
    lines: Callable[[tuple[str | int, ...]], int | None] | None = field(
        default=None, compare=False, repr=False
    )

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
        return None if notify is None else notify.model_dump(by_alias=True, exclude_none=True)

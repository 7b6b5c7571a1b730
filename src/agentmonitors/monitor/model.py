"""The MONITOR.md frontmatter, modelled with pydantic.

Keys keep their authored kebab-case spelling as aliases. Validation is strict (YAML
``5`` is never silently a string) and every custom message is author-facing. A valid
model becomes the plain policy of ``monitor/policy.py`` (:meth:`Frontmatter.to_policy`),
which is what a :class:`MonitorDefinition` holds.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

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
    Window,
    fail,
    require_str,
)
from agentmonitors.monitor.policy import (
    DEFAULT_URGENCY,
    URGENCY_LEVELS,
    URGENCY_RANK,
    BaselineStrategy,
    DebouncePolicy,
    DerivePolicy,
    ExpectPolicy,
    MonitorDefinition,
    MonitorPolicy,
    PayloadPolicy,
    RollupPolicy,
    ShapePolicy,
    ThrottlePolicy,
    TransformPolicy,
    UrgencyBand,
    UrgencyLevel,
    WatchPolicy,
    parse_urgency_band,
)

# Re-exported: the plain types are what callers use once a monitor is parsed.
__all__ = [
    "DEFAULT_URGENCY",
    "URGENCY_LEVELS",
    "URGENCY_RANK",
    "BaselineStrategy",
    "DebounceNotify",
    "DeriveRule",
    "Expect",
    "Frontmatter",
    "MonitorDefinition",
    "Payload",
    "PayloadTransform",
    "RollupNotify",
    "Shape",
    "ThrottleNotify",
    "UrgencyBand",
    "UrgencyLevel",
    "Watch",
    "parse_urgency_band",
]

KEBAB_CASE = re.compile(r"^[a-z][a-z0-9-]*$")


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

    def to_policy(self) -> DebouncePolicy:
        return DebouncePolicy(self.settle_for)


class ThrottleNotify(_Authored):
    """Emit the first observation, then drop the rest for ``suppress-for``."""

    strategy: Literal["throttle"]
    suppress_for: Duration = Field(alias="suppress-for")

    def to_policy(self) -> ThrottlePolicy:
        return ThrottlePolicy(self.suppress_for)


class RollupNotify(_Authored):
    """Accumulate observations and emit them when the ``window`` cron fires."""

    strategy: Literal["rollup"]
    window: CronExpression
    timezone: TimeZone | None = None

    def to_policy(self) -> RollupPolicy:
        return RollupPolicy(self.window, self.timezone)


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

    def to_policy(self) -> ShapePolicy:
        derive = self.derive
        rules = None if derive is None else tuple(DerivePolicy(r.name, r.when) for r in derive)
        return ShapePolicy(rules, self.render)


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

    def to_policy(self) -> PayloadPolicy:
        transform = self.transform
        return PayloadPolicy(
            self.form,
            None
            if transform is None
            else TransformPolicy(transform.language, transform.expression),
            self.encoding,
        )

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


# --------------------------------------------------------------------------- expect


class Expect(_Authored):
    """What the watched subject is expected to do; when it does not, an event says so."""

    change_within: Window = Field(
        alias="change-within",
        description="When nothing changed for this long (since the last change, or the "
        "first observation), one event says the monitor went silent.",
    )

    def to_policy(self) -> ExpectPolicy:
        return ExpectPolicy(self.change_within)


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
    expect: Expect | None = None

    @property
    def band(self) -> UrgencyBand:
        return self.urgency if self.urgency is not None else DEFAULT_URGENCY

    def to_policy(self) -> MonitorPolicy:
        """The validated frontmatter as the plain policy a definition holds."""
        return MonitorPolicy(
            watch=WatchPolicy(self.watch.type, self.watch.interval),
            name=self.name,
            urgency=self.urgency,
            notify=None if self.notify is None else self.notify.to_policy(),
            baseline_strategy=self.baseline_strategy,
            shape=None if self.shape is None else self.shape.to_policy(),
            payload=None if self.payload is None else self.payload.to_policy(),
            tags=None if self.tags is None else tuple(self.tags),
            expect=None if self.expect is None else self.expect.to_policy(),
        )

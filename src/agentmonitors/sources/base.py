"""What every observation source provides, and how a source's config is validated.

A source is named by ``watch.type``. It publishes a draft-07 JSON Schema for its
config (the ``watch`` block minus ``type``), which drives ``validate``, ``schema
generate`` and ``source list``. The bundled sources describe their config as pydantic
models and derive that schema from them, so what ``validate`` accepts and what the
source later parses are the same thing.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from agentmonitors.monitor.cron import timezone_is_valid
from agentmonitors.monitor.issues import Issue, issues_from_jsonschema, issues_from_pydantic
from agentmonitors.sources.traits import SourceTraits, traits_of


@runtime_checkable
class Source(Protocol):
    """The authoring-time face of an observation source.

    A runnable source also has ``async observe(config, context) -> ObservationResult``
    and may define any of the optional traits in ``sources/traits.py`` (cadence, file
    hints, scaffold template, baseline summary, validate advice, approval); each has a
    default.
    """

    @property
    def name(self) -> str:
        """The ``watch.type`` that selects this source (kebab-case)."""
        ...

    @property
    def description(self) -> str: ...

    @property
    def stateful(self) -> bool:
        """Whether the first observation only records a baseline."""
        ...

    @property
    def scope_schema(self) -> Mapping[str, Any]:
        """Draft-07 JSON Schema for the watch block minus ``type``."""
        ...


class SourceConfig(BaseModel):
    """Base for a bundled source's config: authored kebab-case keys, strict types.

    Unknown keys are kept (the reference accepts them) and reported as warnings.
    """

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, populate_by_name=True)


class ClosedBlock(BaseModel):
    """A nested config block whose keys are all known: an unknown key is an error."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)


class OpenBlock(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True, populate_by_name=True)


def draft07_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema reshaped for draft-07 editors and validators.

    Nested models are inlined (so the schema can be embedded in a larger one), and
    titles and ``null`` alternatives (an omitted key means the same thing and is what
    authors write) are dropped.
    """
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    tidy: dict[str, Any] = _tidy(_inline(schema, definitions))
    return tidy


def _inline(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = _inline(definitions[ref.removeprefix("#/$defs/")], definitions)
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return {**target, **_inline(siblings, definitions)}
    return {key: _inline(value, definitions) for key, value in node.items()}


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    if not isinstance(node, dict):
        return node
    tidy: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "discriminator":
            continue  # an OpenAPI keyword; draft-07 tools ignore or reject it
        if key == "description" and isinstance(value, str):
            tidy[key] = value.replace("``", "`")
        elif key == "properties":
            tidy[key] = {name: _tidy(prop) for name, prop in value.items()}
        else:
            tidy[key] = _tidy(value)
    alternatives = tidy.get("anyOf")
    if isinstance(alternatives, list):
        kept = [alt for alt in alternatives if alt != {"type": "null"}]
        if len(kept) == 1 and len(kept) != len(alternatives):
            del tidy["anyOf"]
            tidy = {**kept[0], **tidy}
    return tidy


class ModelSource(SourceTraits):
    """A source whose config is a pydantic model (every bundled source is one)."""

    name: ClassVar[str]
    description: ClassVar[str]
    config_model: ClassVar[type[SourceConfig]]

    @cached_property
    def scope_schema(self) -> Mapping[str, Any]:
        schema = draft07_schema(self.config_model)
        schema.setdefault("description", self.description)
        return schema

    def known_keys(self) -> tuple[str, ...]:
        return tuple(info.alias or name for name, info in self.config_model.model_fields.items())

    def parse_config(self, config: Mapping[str, Any]) -> SourceConfig:
        """The typed config; raises pydantic's ``ValidationError`` when it is invalid."""
        return self.config_model.model_validate(dict(config))

    def checked_config(self, config: Mapping[str, Any]) -> SourceConfig:
        """The typed config for ``observe``; ``ValueError`` naming every problem.

        The tick does not validate, so each source re-checks its config here.
        """
        try:
            return self.parse_config(config)
        except ValidationError as error:
            problems = "; ".join(
                issue.render("watch") for issue in issues_from_pydantic(error, dict(config))
            )
            raise ValueError(f"Invalid {self.name} config: {problems}") from None


def validate_scope(source: Source, config: Mapping[str, Any]) -> list[Issue]:
    """Every problem with ``config`` for ``source``; empty when it is valid.

    Paths in the returned issues are relative to the watch block.
    """
    if isinstance(source, ModelSource):
        try:
            source.parse_config(config)
        except ValidationError as error:
            return issues_from_pydantic(error, dict(config))
        return []
    return _validate_with_json_schema(source.scope_schema, config)


def _validate_with_json_schema(schema: Mapping[str, Any], config: Mapping[str, Any]) -> list[Issue]:
    from jsonschema import Draft7Validator

    validator = Draft7Validator(schema)
    issues = issues_from_jsonschema(
        sorted(validator.iter_errors(dict(config)), key=lambda error: list(error.absolute_path))
    )
    supplemental: list[Issue] = []
    detection = config.get("change-detection")
    if (
        isinstance(detection, Mapping)
        and "collection" in detection
        and detection.get("strategy") != "json-diff"
    ):
        supplemental.append(
            Issue(
                ("change-detection", "collection"),
                "change-detection.collection requires strategy: json-diff",
            )
        )
    properties = schema.get("properties")
    timezone = config.get("timezone")
    if (
        isinstance(properties, Mapping)
        and "timezone" in properties
        and isinstance(timezone, str)
        and not timezone_is_valid(timezone)
    ):
        supplemental.append(
            Issue(
                ("timezone",),
                f'"{timezone}" is not a valid IANA time zone name '
                '(e.g. "America/New_York", "UTC").',
            )
        )
    return supplemental + issues


def known_keys_for(source: Source) -> tuple[str, ...] | None:
    """The config keys a source documents, or None when its schema lists none."""
    if isinstance(source, ModelSource):
        return source.known_keys()
    properties = source.scope_schema.get("properties")
    return tuple(properties) if isinstance(properties, Mapping) and properties else None


class SourceRegistry:
    """Sources by name: ``loaders`` (made on first use, in their given order), then
    registered ones.

    ``complete`` adds the rest (the installed plugins): it runs once, only when a name
    is asked for that no loader or registered source has, or when the full list is.
    So a command whose monitors use one bundled source imports only that one.
    """

    def __init__(
        self,
        loaders: Mapping[str, Callable[[], Source]] | None = None,
        complete: Callable[[SourceRegistry], None] | None = None,
    ) -> None:
        self._loaders: dict[str, Callable[[], Source]] = dict(loaders or {})
        self._order: builtins.list[str] = list(self._loaders)
        self._sources: dict[str, Source] = {}
        self._traits: dict[str, SourceTraits] = {}
        self._complete = complete
        # The daemon's request threads may ask for a source while its tick loads one.
        self._lock = threading.RLock()

    def register(self, source: Source) -> None:
        with self._lock:
            if source.name in self._sources or source.name in self._loaders:
                raise ValueError(f'Observation source "{source.name}" is already registered')
            self._add(source)
            self._order.append(source.name)

    def _add(self, source: Source) -> None:
        self._sources[source.name] = source
        self._traits[source.name] = traits_of(source)

    def _known(self, name: str) -> Source | None:
        source = self._sources.get(name)
        if source is not None:
            return source
        loader = self._loaders.get(name)
        if loader is None:
            return None
        with self._lock:
            if name not in self._sources:
                self._add(loader())
            return self._sources[name]

    def _completed(self) -> None:
        with self._lock:
            complete, self._complete = self._complete, None
            if complete is not None:
                complete(self)

    def get(self, name: str) -> Source | None:
        source = self._known(name)
        if source is None and self._complete is not None:
            self._completed()
            source = self._known(name)
        return source

    def traits(self, name: str) -> SourceTraits:
        """The named source's traits, defaults filled in (all defaults for an unknown name)."""
        if name not in self._traits:
            self.get(name)
        return self._traits.get(name) or traits_of(None)

    def has(self, name: str) -> bool:
        return name in self._loaders or self.get(name) is not None

    def list(self) -> builtins.list[Source]:
        sources = [self.get(name) for name in self.names()]
        return [source for source in sources if source is not None]

    def names(self) -> builtins.list[str]:
        self._completed()
        return list(self._order)

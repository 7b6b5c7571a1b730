"""What every observation source provides, and how a source's config is validated.

A source is named by ``watch.type``. It publishes a draft-07 JSON Schema for its
config (the ``watch`` block minus ``type``), which drives ``validate``, ``schema
generate`` and ``source list``. The bundled sources describe their config as pydantic
models and derive that schema from them, so what ``validate`` accepts and what the
source later parses are the same thing.

pydantic is imported only where a config is validated or a schema is built: each
bundled source names its model by reference (``config_model_ref``), loaded on first
use, and observes through a standard-library reading of its already-validated config
(``sources/plain_config.py``). The model bases live in ``sources/base_config.py``;
``SourceConfig`` and the rest are still importable from here, as third-party sources
written before the move do.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from functools import cached_property

from agentmonitors.monitor.cron import timezone_is_valid
from agentmonitors.monitor.durations import human_floor
from agentmonitors.monitor.issues import Issue, issues_from_jsonschema, issues_from_pydantic
from agentmonitors.sources.plain_config import Unexpected
from agentmonitors.sources.traits import (
    SourceTraits,
    interval_floor_problem,
    missing_traits,
    traits_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from threading import RLock
    from types import ModuleType
    from typing import Any, ClassVar, TypeVar

    from agentmonitors.sources.base_config import (
        ClosedBlock,
        OpenBlock,
        SourceConfig,
        draft07_schema,
    )
    from agentmonitors.sources.protocol import Source
    from agentmonitors.sources.traits import Approval

    Plain = TypeVar("Plain")

__all__ = [
    "ClosedBlock",
    "ModelSource",
    "OpenBlock",
    "Source",
    "SourceConfig",
    "SourceRegistry",
    "draft07_schema",
    "known_keys_for",
    "validate_scope",
]

# Names that moved to ``base_config`` and are still read from here, loaded on access.
_MOVED = ("SourceConfig", "ClosedBlock", "OpenBlock", "draft07_schema")
# The protocols live in ``protocol.py`` (they need ``typing``, which a short command such
# as ``validate`` never loads) and are read from here too, loaded on access.
_PROTOCOLS = ("Source", "Observes", "Describes")


def load_module(name: str) -> ModuleType:
    """The module ``name``, imported if need be (``importlib.import_module``'s answer).

    The builtin, not importlib: importlib brings ``warnings``, a cost a short command
    such as ``validate`` would pay only to load a module it may never ask for.
    """
    return __import__(name, fromlist=["__name__"])


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return getattr(load_module("agentmonitors.sources.base_config"), name)
    if name in _PROTOCOLS:
        return getattr(load_module("agentmonitors.sources.protocol"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _ModelByReference:
    """``config_model`` of a source that names its model as ``"module:Class"`` in
    ``config_model_ref``: imported on first use, so a source that only observes never
    loads its model (nor pydantic)."""

    def __get__(self, instance: object, owner: type[Any]) -> Any:
        ref = getattr(owner, "config_model_ref", None)
        if not isinstance(ref, str) or ":" not in ref:
            raise AttributeError(f"{owner.__name__} sets neither config_model nor config_model_ref")
        module, _, attribute = ref.partition(":")
        return getattr(load_module(module), attribute)


class ModelSource(SourceTraits):
    """A source whose config is a pydantic model (every bundled source is one).

    The model is either the class attribute ``config_model`` or, loaded on first use,
    the one ``config_model_ref`` names (``"package.module:Class"``).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    config_model_ref: ClassVar[str | None] = None
    if TYPE_CHECKING:
        config_model: ClassVar[type[SourceConfig]]
    else:
        config_model = _ModelByReference()

    @cached_property
    def scope_schema(self) -> Mapping[str, Any]:
        # Lazy: the schema is built by pydantic (over 100 ms); observing never asks for it.
        from agentmonitors.sources.base_config import draft07_schema

        schema = draft07_schema(self.config_model)
        schema.setdefault("description", self.description)
        interval = schema.get("properties", {}).get("interval")
        if isinstance(interval, dict):
            # The floor is no pattern a validator can check; it is stated for editors
            # and enforced by validate_scope.
            floor = human_floor(self.min_interval_ms)
            interval["x-minimum-interval"] = floor
            interval["description"] = (
                f"{interval.get('description', '').rstrip('.')}. At least {floor}."
            ).lstrip(". ")
        return schema

    def known_keys(self) -> tuple[str, ...]:
        return tuple(info.alias or name for name, info in self.config_model.model_fields.items())

    def parse_config(self, config: Mapping[str, Any]) -> SourceConfig:
        """The typed config; raises pydantic's ``ValidationError`` when it is invalid."""
        return self.config_model.model_validate(dict(config))

    def checked_config(self, config: Mapping[str, Any]) -> SourceConfig:
        """The typed config; ``ValueError`` naming every problem.

        The tick does not validate, so a source re-checks its config in ``observe``:
        through ``observed_config``, which comes here only for a config its
        standard-library reading is unsure of.
        """
        model, issues = self.parsed_config(config)
        if model is None:
            problems = "; ".join(issue.render("watch") for issue in issues)
            raise ValueError(f"Invalid {self.name} config: {problems}")
        return model

    def parsed_config(self, config: Mapping[str, Any]) -> tuple[SourceConfig | None, list[Issue]]:
        """The typed config and no issue, or None and every problem the model found."""
        # Lazy: pydantic costs a tick over 100 ms; only validating, or a config the
        # standard-library reading is unsure of, gets here.
        from pydantic import ValidationError

        try:
            return self.parse_config(config), []
        except ValidationError as error:
            return None, issues_from_pydantic(error, dict(config))

    def observed_config(
        self, config: Mapping[str, Any], read: Callable[[Mapping[str, Any]], Plain]
    ) -> Plain:
        """``config`` as ``read`` (a standard-library reading) gives it, for ``observe``.

        When ``read`` is not sure of ``config`` (it raises ``Unexpected``), the model
        decides: an invalid config raises ``checked_config``'s ``ValueError``, and a
        valid one is read again from the model's values.
        """
        try:
            return read(config)
        except Unexpected:
            pass
        # Lazy: the model's values need pydantic (over 100 ms); a valid config never gets here.
        from agentmonitors.sources.base_config import declared_values

        model = self.checked_config(config)
        try:
            return read(declared_values(model))
        except Unexpected:
            raise ValueError(
                f"Invalid {self.name} config: the validated values could not be read"
            ) from None


def validate_scope(source: Source, config: Mapping[str, Any]) -> list[Issue]:
    """Every problem with ``config`` for ``source``; empty when it is valid.

    Paths in the returned issues are relative to the watch block.
    """
    if isinstance(source, ModelSource):
        _, issues = source.parsed_config(config)
        return issues or _floor_issues(source, config)
    issues = _validate_with_json_schema(source.scope_schema, config)
    return issues or _floor_issues(source, config)


def _floor_issues(source: Source, config: Mapping[str, Any]) -> list[Issue]:
    problem = interval_floor_problem(traits_of(source), config, source.name)
    return [] if problem is None else [Issue(("interval",), problem)]


def _validate_with_json_schema(schema: Mapping[str, Any], config: Mapping[str, Any]) -> list[Issue]:
    # Lazy: jsonschema costs about 90 ms; only a source without a pydantic model needs it.
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
        approvals: Mapping[str, str | None] | None = None,
    ) -> None:
        self._loaders: dict[str, Callable[[], Source]] = dict(loaders or {})
        # name -> "module:function" reading a loader's approval without loading it.
        self._approvals: dict[str, str | None] = dict(approvals or {})
        self._order: builtins.list[str] = list(self._loaders)
        self._sources: dict[str, Source] = {}
        self._traits: dict[str, SourceTraits] = {}
        self._complete = complete
        # The daemon's request threads may ask for a source while its tick loads one.
        self._locks: dict[str, RLock] = {}

    @property
    def _lock(self) -> RLock:
        """The registry's lock, made on first use: ``dict.setdefault`` is atomic, so
        threads racing to make it all take the one kept."""
        lock = self._locks.get("lock")
        if lock is None:
            # Lazy: threading costs a short command (validate) an import, and only
            # loading or registering a source takes the lock.
            import threading

            lock = self._locks.setdefault("lock", threading.RLock())
        return lock

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
        """The named source's traits, defaults filled in (all defaults, under that name,
        for an unknown one)."""
        if name not in self._traits:
            self.get(name)
        return self._traits.get(name) or missing_traits(name)

    def approval(self, name: str, config: Mapping[str, Any], workspace: str) -> Approval | None:
        """The named source's ``approval`` of ``config``, read from its light module
        when the source is not loaded and that module is sure of ``config``."""
        if name not in self._sources and name in self._approvals:
            where = self._approvals[name]
            if where is None:
                return None
            module_name, _, function = where.partition(":")
            try:
                answer: Approval | None = getattr(load_module(module_name), function)(
                    config, workspace
                )
                return answer
            except Unexpected:
                pass  # the source's model decides
        return self.traits(name).approval(config, workspace)

    def has(self, name: str) -> bool:
        return name in self._loaders or self.get(name) is not None

    def list(self) -> builtins.list[Source]:
        sources = [self.get(name) for name in self.names()]
        return [source for source in sources if source is not None]

    def names(self) -> builtins.list[str]:
        self._completed()
        return list(self._order)


if TYPE_CHECKING:
    # The one base answers the whole protocol: mypy fails here when a member is added
    # to ``Source`` without its default in ``SourceTraits``.
    _COMPLETE: type[Source] = SourceTraits

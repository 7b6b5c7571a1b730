"""The ``Source`` protocol: everything the tool may ask of an observation source.

Kept apart from ``base.py`` because a protocol needs ``typing`` at run time, which a
short command such as ``validate`` never loads (docs/architecture.md, "Speed");
``base.py`` still gives these names, loaded on access. ``sources/traits.py`` holds the
default of every member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentmonitors.sources.file_change import FileTrigger
    from agentmonitors.sources.observation import ObservationContext, ObservationResult
    from agentmonitors.sources.traits import Approval, Cadence, FileHints, Scaffold, ScaffoldSeed


@runtime_checkable
class Source(Protocol):
    """Everything the runtime, the catalog and diagnosis may ask of an observation source.

    A source must define ``name``, ``scope_schema`` and ``observe`` itself
    (registration refuses a plugin without them: ``Observes``, ``Describes``) and
    should say what it is in ``description``; every other member has its
    default in ``sources/traits.py``'s ``SourceTraits``, the one base. Inherit from it
    (or from ``ModelSource``, for a pydantic config) to take the defaults; a source that
    inherits nothing of ours is completed with them when it is registered, so the rest
    of the tool always finds every member here and never probes for one.
    """

    # ------------------------------------------------------------ what it is
    @property
    def name(self) -> str:
        """The ``watch.type`` that selects this source (kebab-case)."""
        ...

    @property
    def description(self) -> str: ...

    @property
    def scope_schema(self) -> Mapping[str, Any]:
        """Draft-07 JSON Schema for the watch block minus ``type``."""
        ...

    # ------------------------------------------------------------ observing (runtime)
    @property
    def stateful(self) -> bool:
        """Whether the first observation only records a baseline."""
        ...

    @property
    def observes_in_place(self) -> bool:
        """Whether ``observe_blocking`` works (``daemon once`` then needs no event loop)."""
        ...

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult: ...

    def observe_blocking(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult: ...

    def forget(self, monitor_id: str) -> None:
        """Drop what is cached for a monitor that no longer runs."""
        ...

    # ------------------------------------------------------------ scheduling
    @property
    def default_interval_ms(self) -> int: ...

    @property
    def min_interval_ms(self) -> int: ...

    def cadence(self, config: Mapping[str, Any]) -> Cadence: ...

    def file_hints(self, config: Mapping[str, Any], workspace: str) -> FileHints | None: ...

    # ------------------------------------------------------------ authoring (catalog)
    @property
    def scaffold_seeds(self) -> Mapping[str, str]: ...

    def scaffold(self, seed: ScaffoldSeed) -> Scaffold | None: ...

    def config_warnings(self, config: Mapping[str, Any]) -> list[str]: ...

    def approval(self, config: Mapping[str, Any], workspace: str) -> Approval | None: ...

    def outside_paths(self, config: Mapping[str, Any], workspace: str) -> frozenset[str]: ...

    # ------------------------------------------------------------ diagnosis
    @property
    def baseline_notes(self) -> tuple[str, ...]: ...

    def baseline_summary(self, state: Any) -> str | None: ...

    def target_problem(self, config: Mapping[str, Any], workspace: str) -> str | None: ...

    def verify_trigger(self, config: Mapping[str, Any], workspace: str) -> FileTrigger | None: ...

    def verify_interval_ms(self, config: Mapping[str, Any]) -> int: ...


@runtime_checkable
class Observes(Protocol):
    """The member of ``Source`` with no usable default: a source observes itself."""

    name: str

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult: ...


@runtime_checkable
class Describes(Protocol):
    """The other member a source must define itself: the schema of its watch block."""

    @property
    def scope_schema(self) -> Mapping[str, Any]: ...

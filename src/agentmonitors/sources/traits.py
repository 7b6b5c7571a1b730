"""The one base of every source: each member of the ``Source`` protocol with its default.

Everything the rest of the tool needs to know about one kind of source is asked of the
source (``sources/base.py``'s ``Source`` protocol lists it): how to observe (in place
too, or only on an event loop), what to drop when a monitor goes, how it is scheduled,
which files hint at a change, the template ``init`` writes, what ``monitor test`` prints
after a baseline, the advice ``validate`` adds, what a project monitor of it must have
approved, what ``doctor`` says it cannot find and the change ``verify`` makes to prove
it. A source states what it needs by defining those members; whatever it leaves out
takes the default in :class:`SourceTraits`. Inheriting from it is the easy way (the
bundled sources do, through ``ModelSource``); a source that inherits nothing of ours
is completed here, once, when it is registered (:func:`traits_of`). So a third-party
source that implements only ``name``, ``description``, ``scope_schema`` and ``observe``
behaves like a plain interval source that needs no approval, and one that implements
more gets each of those features with no change anywhere else.

Callers never probe a source themselves: they ask the registry's ``traits`` (or
:func:`traits_of`) for the complete source and call what the protocol says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, lru_cache

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.durations import duration_ms, human_floor, is_duration

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from agentmonitors.sources.file_change import FileTrigger
    from agentmonitors.sources.observation import ObservationContext, ObservationResult

# A source's cadence when neither it nor the monitor names one.
DEFAULT_INTERVAL_MS = 30_000
# The shortest ``interval`` a source takes when it states none of its own.
DEFAULT_MIN_INTERVAL_MS = 1_000

# What ``verify`` budgets for one observation of a source that is not scheduled by an
# interval (a cron minute), or whose cadence cannot be read.
FALLBACK_VERIFY_INTERVAL_MS = 60_000

# The ``init`` flags a source can take, and the watch key each seeds.
SCAFFOLD_FLAGS = ("glob", "command")

DEFAULT_BASELINE_NOTES = (
    "In production, the agent process keeps running between observations, so changes are"
    " detected across polls.",
    "This test command verifies that the source is configured correctly.",
)


@dataclass(frozen=True)
class Every:
    """Observe every ``interval_ms`` (measured from the last observation)."""

    interval_ms: int


@dataclass(frozen=True)
class OnCron:
    """Observe in each minute a five-field cron fires in, read in ``timezone``.

    The values are the authored ones; the scheduler reports a bad one as an error.
    """

    cron: Any
    timezone: Any


Cadence = Every | OnCron


@dataclass(frozen=True)
class FileHints:
    """Which file-system events may matter to one monitor.

    The daemon watches ``roots`` and answers an event under them for which ``matters``
    is true with an early observation of that monitor; the periodic one stays the truth.
    """

    roots: list[str]
    matters: Callable[[str], bool]


@dataclass(frozen=True)
class ScaffoldSeed:
    """What ``init`` was given for the new monitor's watch block (``--glob``, ``--command``)."""

    patterns: tuple[str, ...] = ()
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scaffold:
    """A new monitor's source-specific text.

    ``watch`` continues the ``watch:`` block after its ``type:`` line: lines indented
    by two spaces, each ending in a newline. ``body`` is the instructions under the
    frontmatter.
    """

    watch: str
    body: str


@dataclass(frozen=True)
class Approval:
    """What a monitor runs, reads or sends beyond its workspace, as approval records it.

    ``reach`` holds names only (argv, env keys, hosts, paths), never a secret: it is
    stored in the ledger and shown. ``private`` holds what also changes what runs or is
    sent but may be secret (env values, header values, credentials): it is hashed into
    the approval's key with ``reach`` and never stored, so any change to either asks
    again. Both are read from the canonical config (aliases resolved). ``summary``
    completes "this monitor ..." in messages (``runs ["make", "check"]``).

    The rest is what the approval lets the checks in ``sources/permit.py`` allow:
    ``commands`` (argv with its resolved working folder), request ``origins``
    (``scheme://host[:port]``) and the ``secret_env`` variables whose values may be
    sent. Outside reads come from the source's ``outside_paths``.
    """

    reach: dict[str, Any]
    summary: str
    private: dict[str, Any] = field(default_factory=dict)
    commands: tuple[tuple[tuple[str, ...], str | None], ...] = ()
    origins: tuple[str, ...] = ()
    secret_env: tuple[str, ...] = ()


def interval_floor_problem(
    traits: SourceTraits, config: Mapping[str, Any], source_name: str
) -> str | None:
    """Why the authored ``interval`` is below the source's floor, or None.

    Only an interval that schedules the monitor counts (a cron source ignores it).
    """
    interval = config.get("interval")
    if not is_duration(interval):
        return None
    try:
        cadence = traits.cadence(config)
    except Exception:  # a bad value is reported by the config's own checks
        return None
    floor = traits.min_interval_ms
    if not isinstance(cadence, Every) or cadence.interval_ms >= floor:
        return None
    return (
        f'"{interval}" is below the minimum interval of {source_name}, '
        f"{human_floor(floor)}; use {human_floor(floor)} or more"
    )


def quoted_list(items: Sequence[str], indent: str = "    ") -> str:
    """YAML list lines for a scaffold, each item single-quoted (safe for any one-line text)."""
    return "\n".join(f"{indent}- '" + item.replace("'", "''") + "'" for item in items)


class SourceTraits:
    """Every member of the ``Source`` protocol, with its default.

    Override any of these in a source class; :func:`traits_of` fills in the rest for a
    source that does not inherit from this class. ``name``, ``scope_schema`` and
    ``observe`` are what a source must define itself: registration refuses a plugin
    without them (``plugins.source_problem``), so their defaults here only answer for
    a name no source has.
    """

    # The ``watch.type`` that selects this source (kebab-case), and one line about it.
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    # Whether the first observation only records a baseline (``monitor test`` then
    # observes twice and prints ``baseline_summary``).
    stateful: ClassVar[bool] = False
    # The cadence of a monitor that authors no ``interval``.
    default_interval_ms: ClassVar[int] = DEFAULT_INTERVAL_MS
    # The floor: an authored ``interval`` below it is a validation error (and the
    # JSON Schema states it), so a monitor never runs its source in a tight loop.
    min_interval_ms: ClassVar[int] = DEFAULT_MIN_INTERVAL_MS
    # ``init`` flags this source accepts ("glob", "command") and the watch key each seeds.
    scaffold_seeds: ClassVar[Mapping[str, str]] = {}
    # What ``monitor test`` says when a baseline and the run after it see no change.
    baseline_notes: ClassVar[tuple[str, ...]] = DEFAULT_BASELINE_NOTES
    # Whether ``observe_blocking`` observes in the caller's thread (``daemon once``
    # then needs no event loop for this source).
    observes_in_place: ClassVar[bool] = False

    @cached_property
    def scope_schema(self) -> Mapping[str, Any]:
        """Draft-07 JSON Schema for the watch block minus ``type``."""
        return {"type": "object"}

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """Observe once: what changed since ``context.previous_state``, and the next state."""
        del config, context
        raise RuntimeError(f'source "{self.name}" cannot observe')

    def observe_blocking(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """``observe`` without an event loop; only called when ``observes_in_place``."""
        del config, context
        raise RuntimeError(f'source "{self.name}" cannot observe in place')

    def forget(self, monitor_id: str) -> None:
        """Drop what is cached for a monitor that no longer runs."""
        del monitor_id

    def target_problem(self, config: Mapping[str, Any], workspace: str) -> str | None:
        """What a valid monitor looks at and cannot find (``doctor``: "its globs match no
        file"); None: nothing is missing, or the source cannot tell."""
        del config, workspace
        return None

    def verify_trigger(self, config: Mapping[str, Any], workspace: str) -> FileTrigger | None:
        """The file change that proves a monitor to ``verify``; None: the source has no
        automatic trigger (``--trigger-cmd`` or ``--manual`` is needed). Raises
        ``file_change.TriggerProblem`` when it has one but cannot prepare it."""
        del config, workspace
        return None

    def verify_interval_ms(self, config: Mapping[str, Any]) -> int:
        """How long ``verify`` expects one observation to take to come round when the
        monitor authors no ``interval``: the source's own cadence, else a minute."""
        try:
            cadence = self.cadence(config)
        except Exception:  # an odd config: the fallback is a fair guess for a budget
            return FALLBACK_VERIFY_INTERVAL_MS
        return cadence.interval_ms if isinstance(cadence, Every) else FALLBACK_VERIFY_INTERVAL_MS

    def cadence(self, config: Mapping[str, Any]) -> Cadence:
        """How a monitor with this config is scheduled; ``ValueError`` for a bad value.

        By default the authored ``interval``, else ``default_interval_ms``.
        """
        interval = config.get("interval")
        if isinstance(interval, str):
            return Every(duration_ms(interval))
        return Every(self.default_interval_ms)

    def config_warnings(self, config: Mapping[str, Any]) -> list[str]:
        """Advice about a valid config, shown by ``validate`` (never affects validity)."""
        del config
        return []

    def file_hints(self, config: Mapping[str, Any], workspace: str) -> FileHints | None:
        """The file events that may matter to a monitor; None: file events never do."""
        del config, workspace
        return None

    def scaffold(self, seed: ScaffoldSeed) -> Scaffold | None:
        """The template ``init`` writes; None: one built from the config schema."""
        del seed
        return None

    def baseline_summary(self, state: Any) -> str | None:
        """One line about a first observation's ``next_state`` (``  HTTP 200 (12 bytes)``)."""
        del state
        return None

    def approval(self, config: Mapping[str, Any], workspace: str) -> Approval | None:
        """What a project monitor must have approved before it runs; None: nothing."""
        del config, workspace
        return None

    def outside_paths(self, config: Mapping[str, Any], workspace: str) -> frozenset[str]:
        """Resolved paths outside ``workspace`` that an approved monitor may read."""
        del config, workspace
        return frozenset()


_VALUES = (
    "name",
    "description",
    "scope_schema",
    "observes_in_place",
    "stateful",
    "default_interval_ms",
    "min_interval_ms",
    "scaffold_seeds",
    "baseline_notes",
)
_METHODS = (
    "observe",
    "observe_blocking",
    "forget",
    "target_problem",
    "verify_trigger",
    "verify_interval_ms",
    "cadence",
    "config_warnings",
    "file_hints",
    "scaffold",
    "baseline_summary",
    "approval",
    "outside_paths",
)

# Every member of the protocol (``sources/base.py``'s ``Source``), each defaulted above.
MEMBERS = (*_VALUES, *_METHODS)


class _Filled(SourceTraits):
    """A source that does not inherit :class:`SourceTraits`, with the defaults filled in."""

    def __init__(self, source: object) -> None:
        # An instance attribute hides the class default: what the source defines wins,
        # and a default method still reads the source's own values through ``self``.
        # The one place a source's members are looked up by name: the protocol's list.
        defined = {name: getattr(source, name) for name in MEMBERS if hasattr(source, name)}
        if "observe_blocking" in defined and "observes_in_place" not in defined:
            # A source written before the flag says it observes in place by having the method.
            defined["observes_in_place"] = True
        self.__dict__.update(defined)


_DEFAULTS = SourceTraits()


@lru_cache(maxsize=64)
def missing_traits(name: str) -> SourceTraits:
    """The defaults under ``name``, for a monitor whose source is gone (uninstalled,
    renamed): its failure then names the source it asked for."""
    traits: SourceTraits = type("MissingSource", (SourceTraits,), {"name": name})()
    return traits


def traits_of(source: object | None) -> SourceTraits:
    """``source``'s traits with the defaults for what it leaves out (all defaults for None)."""
    if source is None:
        return _DEFAULTS
    if isinstance(source, SourceTraits):
        return source
    return _Filled(source)


def traits_problem(source: object) -> str | None:
    """Why the traits a source defines are unusable, or None (registration skips it)."""
    name = getattr(source, "name", "?")
    for method in _METHODS:
        if hasattr(source, method) and not callable(getattr(source, method)):
            return f'source "{name}" has a {method} that is not callable'
    for flag in ("stateful", "observes_in_place"):
        if not isinstance(getattr(source, flag, False), bool):
            return f'source "{name}" has a {flag} that is not true or false'
    interval = getattr(source, "default_interval_ms", DEFAULT_INTERVAL_MS)
    if not isinstance(interval, int) or isinstance(interval, bool) or interval <= 0:
        return f'source "{name}" has a default_interval_ms that is not a positive integer'
    floor = getattr(source, "min_interval_ms", DEFAULT_MIN_INTERVAL_MS)
    if not isinstance(floor, int) or isinstance(floor, bool) or floor <= 0:
        return f'source "{name}" has a min_interval_ms that is not a positive integer'
    seeds = getattr(source, "scaffold_seeds", {})
    if not isinstance(seeds, Mapping) or not all(
        flag in SCAFFOLD_FLAGS and isinstance(key, str) and key for flag, key in seeds.items()
    ):
        return (
            f'source "{name}" has scaffold_seeds that is not a mapping of '
            f"{' or '.join(SCAFFOLD_FLAGS)} to a watch key"
        )
    notes = getattr(source, "baseline_notes", ())
    if not isinstance(notes, tuple | list) or not all(isinstance(note, str) for note in notes):
        return f'source "{name}" has baseline_notes that are not a list of strings'
    return None

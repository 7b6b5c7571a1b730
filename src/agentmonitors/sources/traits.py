"""What a source says about itself beyond observing, and the defaults for what it leaves out.

Everything the rest of the tool needs to know about one kind of source is asked of the
source: how it is scheduled, which files hint at a change, the template ``init``
writes, what ``monitor test`` prints after a baseline, the advice ``validate`` adds,
and what a project monitor of it must have approved. A source states what it needs by
defining the attributes and methods of :class:`SourceTraits` (inheriting from it is
the easy way; the bundled sources do, through ``ModelSource``); whatever it leaves out
takes the default here. So a third-party source that implements only ``name``,
``description``, ``scope_schema`` and ``observe`` behaves like a plain interval source
that needs no approval, and one that implements more gets each of those features with
no change anywhere else.

Callers never probe a source themselves: they ask :func:`traits_of` (or the registry's
``traits``), which fills the gaps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.durations import duration_ms

# A source's cadence when neither it nor the monitor names one.
DEFAULT_INTERVAL_MS = 30_000
# The shortest ``interval`` a source takes when it states none of its own.
DEFAULT_MIN_INTERVAL_MS = 1_000

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
    from agentmonitors.monitor.durations import human_floor, is_duration

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
    """The optional part of a source, with its defaults.

    Override any of these in a source class; :func:`traits_of` fills in the rest for a
    source that does not inherit from this class.
    """

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
    "stateful",
    "default_interval_ms",
    "min_interval_ms",
    "scaffold_seeds",
    "baseline_notes",
)
_METHODS = (
    "cadence",
    "config_warnings",
    "file_hints",
    "scaffold",
    "baseline_summary",
    "approval",
    "outside_paths",
)


class _Filled(SourceTraits):
    """A source that does not inherit :class:`SourceTraits`, with the defaults filled in."""

    def __init__(self, source: object) -> None:
        # An instance attribute hides the class default: what the source defines wins,
        # and a default method still reads the source's own values through ``self``.
        for name in (*_VALUES, *_METHODS):
            if hasattr(source, name):
                setattr(self, name, getattr(source, name))


_DEFAULTS = SourceTraits()


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
    if hasattr(source, "stateful") and not isinstance(source.stateful, bool):
        return f'source "{name}" has a stateful that is not true or false'
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

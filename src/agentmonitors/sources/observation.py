"""What a source hands the runtime: observations, its next state, and an outcome.

A source reports *current state* (snapshots plus its private ``next_state`` cursor);
the runtime alone decides timing, diffs and delivery. Attribute names are Python's;
``to_json`` gives the camelCase shape stored in the database and printed by the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.sources.permit import Permit

# ``ObservationContext.read_parts``: the named parts' stored texts, or None.
ReadParts = Callable[[Collection[str]], "Mapping[str, str] | None"]

ChangeKind = Literal["created", "modified", "deleted", "descoped"]
Salience = Literal["low", "normal", "high"]
Outcome = Literal["rebaselined", "no-files-matched"]

# ``next_state`` is optional and may legitimately be JSON ``null``; this marks "absent".
KEEP_STATE: Any = type("KeepState", (), {"__repr__": lambda self: "KEEP_STATE"})()


@dataclass(frozen=True)
class Observation:
    """One thing a source saw. Only ``title`` is required."""

    title: str
    summary: str | None = None
    body: str | None = None
    payload: Any = None
    snapshot_text: str | None = None
    snapshot: Any = None
    object_key: str | None = None
    query_scope: Mapping[str, str | list[str]] | None = None
    change_kind: ChangeKind | None = None
    salience: Salience | None = None
    # Why something failed, in a few lines (a command's exit status and the end of its
    # stderr): delivered above the monitor's instructions, bounded by the source.
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The camelCase shape, absent fields omitted."""
        pairs = {
            "title": self.title,
            "summary": self.summary,
            "body": self.body,
            "payload": self.payload,
            "snapshotText": self.snapshot_text,
            "snapshot": self.snapshot,
            "objectKey": self.object_key,
            "queryScope": dict(self.query_scope) if self.query_scope is not None else None,
            "changeKind": self.change_kind,
            "salience": self.salience,
            "detail": self.detail,
        }
        return {key: value for key, value in pairs.items() if value is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        """Rebuild an observation stored by ``to_json`` (held notify batches)."""
        scope = data.get("queryScope")
        return cls(
            title=str(data.get("title", "")),
            summary=data.get("summary"),
            body=data.get("body"),
            payload=data.get("payload"),
            snapshot_text=data.get("snapshotText"),
            snapshot=data.get("snapshot"),
            object_key=data.get("objectKey"),
            query_scope=dict(scope) if isinstance(scope, Mapping) else None,
            change_kind=data.get("changeKind"),
            salience=data.get("salience"),
            detail=data.get("detail") if isinstance(data.get("detail"), str) else None,
        )


@dataclass(frozen=True)
class BaselineTexts:
    """A baseline of many objects given as texts by object key, not an observation each.

    Making 100,000 observations that only carry a key and a text was a tenth of a large
    tree's first tick. ``observation`` makes one object's whole baseline observation,
    for a monitor whose shape renders from more than the text.
    """

    texts: Mapping[str, str]
    observation: Callable[[str], Observation]


@dataclass(frozen=True)
class ObservationResult:
    """The outcome of one ``observe`` call.

    ``next_state`` left as ``KEEP_STATE`` keeps the stored state; any other value
    (``None`` included) replaces it.
    """

    observations: list[Observation] = field(default_factory=list)
    next_state: Any = KEEP_STATE
    outcome: Outcome | None = None
    warnings: list[str] = field(default_factory=list)
    # A short digest of what the state (the next one, or the kept one) was made from,
    # stored beside it and handed back as ``ObservationContext.previous_state_token``:
    # a source that finds the same digest next time may keep the state without
    # reading it. None stores no token; the store drops a token whenever the state
    # it came with is rewritten without one.
    state_token: str | None = None
    # What a first observation saw of each object it took as its baseline, shaped like
    # the observation a change of that object would make (``snapshot_text``,
    # ``snapshot``, ``object_key``). Never delivered: the runtime keeps each as the
    # object's first snapshot, so the first change after a baseline is shown as a diff.
    # Texts are bounded as a change's snapshot is.
    baselines: list[Observation] = field(default_factory=list)
    # The same for a source with many objects (file-fingerprint over a tree), kept by
    # the runtime as ``baselines`` are.
    baseline_texts: BaselineTexts | None = None
    # Set when the observation failed (a command that exited with a code its monitor
    # does not call ordinary, or could not run): why, in one line. The runtime still
    # stores ``next_state`` and the observations, and records the failure as it
    # records a raised error: the monitor is failing, with this reason, and backs off
    # until an observation succeeds.
    failure: str | None = None

    @property
    def has_next_state(self) -> bool:
        return self.next_state is not KEEP_STATE


class ObservationContext:
    """What the runtime tells a source about this call (read-only).

    ``previous_state`` is the last persisted ``next_state`` (None when there is none
    yet). The runtime may hand it over unread (:meth:`deferred`): it is then decoded
    on first access, so a source that settles a call on ``previous_state_token``
    alone never pays for decoding a large state.
    """

    __slots__ = (
        "_load_state",
        "_state",
        "changed_paths",
        "monitor_id",
        "now_ms",
        "permit",
        "previous_state_token",
        "read_parts",
        "resident",
        "workspace_path",
    )

    _state: Any
    _load_state: Callable[[], Any] | None
    now_ms: int
    workspace_path: str | None
    monitor_id: str
    permit: Permit
    previous_state_token: str | None
    changed_paths: frozenset[str] | None
    resident: bool
    read_parts: ReadParts | None

    def __init__(
        self,
        previous_state: Any,
        now_ms: int,
        workspace_path: str | None,
        monitor_id: str = "",
        approved_outside_paths: frozenset[str] = frozenset(),
        previous_state_token: str | None = None,
        *,
        permit: Permit | None = None,
        changed_paths: frozenset[str] | None = None,
        resident: bool = False,
        read_parts: ReadParts | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_state", previous_state)
        set_(self, "_load_state", None)
        # Milliseconds since the epoch, from the runtime's clock: every timestamp a
        # source reports derives from it, so tests can drive time.
        set_(self, "now_ms", now_ms)
        # The project root; relative paths in a config resolve against it.
        set_(self, "workspace_path", workspace_path)
        # The monitor being observed, so a source can keep per-monitor caches.
        set_(self, "monitor_id", monitor_id)
        # What this observation may do beyond the workspace, checked where it is done
        # (sources/permit.py). Only the approval ledger grants more than the default:
        # the workspace only, plus ``approved_outside_paths`` when a caller names them.
        if permit is None:
            permit = Permit(monitor_id=monitor_id, outside_paths=approved_outside_paths)
        set_(self, "permit", permit)
        # What the source returned as ``state_token`` with the stored state, or None:
        # a short digest of what that state was made from (see ObservationResult).
        set_(self, "previous_state_token", previous_state_token)
        # Set when this call answers file events alone (not the monitor's schedule):
        # the absolute paths that changed. A source may look at just those, or ignore
        # them and observe everything; its periodic observation stays the truth.
        set_(self, "changed_paths", changed_paths)
        # Set by the daemon, which observes the monitor again and again: what a source
        # reads of its stored state is worth keeping in memory from the first call, so
        # the first file event after a start does not pay for decoding it.
        set_(self, "resident", resident)
        # Set by a runtime whose store keeps large states in parts (store/state_parts.py):
        # the stored texts of the named parts of the previous state, absent names left
        # out, or None when that state is not stored in parts. A source that can tell
        # which parts moved reads those alone, and ``previous_state`` never.
        set_(self, "read_parts", read_parts)

    @classmethod
    def deferred(
        cls,
        load_state: Callable[[], Any],
        now_ms: int,
        workspace_path: str | None,
        monitor_id: str = "",
        approved_outside_paths: frozenset[str] = frozenset(),
        previous_state_token: str | None = None,
        *,
        permit: Permit | None = None,
        changed_paths: frozenset[str] | None = None,
        resident: bool = False,
        read_parts: ReadParts | None = None,
    ) -> ObservationContext:
        """A context whose ``previous_state`` is read by ``load_state`` when first used."""
        context = cls(
            None,
            now_ms,
            workspace_path,
            monitor_id,
            approved_outside_paths,
            previous_state_token,
            permit=permit,
            changed_paths=changed_paths,
            resident=resident,
            read_parts=read_parts,
        )
        object.__setattr__(context, "_load_state", load_state)
        return context

    @property
    def previous_state(self) -> Any:
        load = self._load_state
        if load is not None:
            object.__setattr__(self, "_state", load())
            object.__setattr__(self, "_load_state", None)
        return self._state

    @property
    def approved_outside_paths(self) -> frozenset[str]:
        """Resolved outside paths the user approved reading (the permit's)."""
        return self.permit.outside_paths

    @property
    def previous_state_loaded(self) -> bool:
        """Whether ``previous_state`` was read (always, unless the context is deferred)."""
        return self._load_state is None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ObservationContext is read-only: cannot assign {name!r}")

    def __repr__(self) -> str:
        state = repr(self._state) if self._load_state is None else "<not read yet>"
        return (
            f"ObservationContext(previous_state={state}, now_ms={self.now_ms!r},"
            f" workspace_path={self.workspace_path!r}, monitor_id={self.monitor_id!r})"
        )

"""What a source hands the runtime: observations, its next state, and an outcome.

A source reports *current state* (snapshots plus its private ``next_state`` cursor);
the runtime alone decides timing, diffs and delivery. Attribute names are Python's;
``to_json`` gives the camelCase shape stored in the database and printed by the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from agentmonitors.lean_dataclass import dataclass, field

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
        )


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

    @property
    def has_next_state(self) -> bool:
        return self.next_state is not KEEP_STATE


@dataclass(frozen=True)
class ObservationContext:
    """What the runtime tells a source about this call."""

    # The last persisted ``next_state``; None when there is none yet.
    previous_state: Any
    # Milliseconds since the epoch, from the runtime's clock: every timestamp a
    # source reports derives from it, so tests can drive time.
    now_ms: int
    # The project root; relative paths in a config resolve against it.
    workspace_path: str | None
    # The monitor being observed, so a source can keep per-monitor caches.
    monitor_id: str = ""
    # Resolved outside paths (files or folders) the user approved reading: a symlink
    # whose target lies under one may be followed out of the workspace. The approval
    # ledger fills this; empty means only the workspace itself.
    approved_outside_paths: frozenset[str] = frozenset()

"""A file-fingerprint observation of the paths file events named, without a walk.

A monitor hinted by file events (docs/architecture.md, "Speed") gets the changed paths
in ``ObservationContext.changed_paths``. Looking at just those costs what the change
costs: a ``stat`` and a hash per path, against the fingerprints the last observation
left, not a walk and a ``stat`` of every matched file. Anything this cannot judge as
surely as the walk would (a folder appeared, a symlink on the way, a path the globs
cannot be matched against as a string, no known state) answers None, and the caller
walks everything. The periodic walk stays the truth either way.

The last state each monitor stored is kept in memory (:class:`Memory`) under the state
token it was stored with: the runtime hands that token back, so an equal token proves
the memory is what the store holds, and a large state is not decoded again.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.file_fingerprint.folders import INDEX_PART
from agentmonitors.sources.file_fingerprint.pieces import EncodedState, Pieces, encoded, updated
from agentmonitors.sources.file_globs import GlobPattern
from agentmonitors.sources.observation import (
    KEEP_STATE,
    Observation,
    ObservationContext,
    ObservationResult,
)

# Tokens of states made here: never equal to a walk's tree token, so the next walk
# compares against the state instead of trusting it unchanged.
SCOPED_TOKEN_PREFIX = "ffs:"

Digest = Callable[[str], tuple[str, bytes | None]]
Compare = Callable[
    [str, Mapping[str, Any], dict[str, str], dict[str, bytes | None]], Observation | None
]


@dataclass(frozen=True)
class Memory:
    """A state as stored, with the token stored beside it and what it was made for."""

    token: str
    config: tuple[Any, ...]
    # Never changed once kept: an observation copies before it changes anything.
    fingerprints: Mapping[str, Any]
    stats: Mapping[str, Any]
    # Its JSON text in pieces, once a change needed them (None until then).
    pieces: Pieces | None = None


def remember(
    memories: dict[str, Memory],
    monitor_id: str,
    token: str | None,
    made_for: tuple[Any, ...],
    state: tuple[Mapping[str, Any], Mapping[str, Any]],
    pieces: Pieces | None = None,
) -> None:
    """Keep the state about to be stored (or left stored) with its token; a state
    stored without a token cannot be recognised, so nothing is kept for it."""
    if token is None or not monitor_id:
        memories.pop(monitor_id, None)
    else:
        memories[monitor_id] = Memory(token, made_for, *state, pieces)


class _Unsure(Exception):
    """The events cannot be judged without a walk."""


def observe_changed(
    paths: frozenset[str],
    globs: list[GlobPattern],
    ignore: list[GlobPattern],
    previous: tuple[Mapping[str, Any], Mapping[str, Any]],
    settled: Callable[[list[int]], bool],
    digest: Digest,
    compare: Compare,
    token: str | None,
    pieces: Pieces | None,
) -> ObservationResult | None:
    """What a walk would find for ``paths`` against ``previous`` (fingerprints,
    stat keys), or None when only a walk can tell. The result's state token is new
    whenever the state moved; an unmoved state keeps ``token``, the stored one."""
    if any(pattern.needs_normalising for pattern in (*globs, *ignore)):
        return None
    fingerprints, stored = previous
    if not fingerprints:
        return None  # nothing known, or "no files matched": a walk says it right
    current = dict(fingerprints)
    stats = dict(stored)
    contents: dict[str, bytes | None] = {}
    touched: set[str] = set()
    try:
        for path in sorted(paths):
            _look(path, globs, ignore, current, stats, contents, touched, settled, digest)
    except _Unsure:
        return None
    if not current:
        return None
    # Only the touched entries can differ from the previous state.
    moved = {
        path
        for path in touched
        if current.get(path) != fingerprints.get(path) or stats.get(path) != stored.get(path)
    }
    if not moved:
        return ObservationResult(observations=[], next_state=KEEP_STATE, state_token=token)
    observations = [
        found
        for path in sorted(moved)
        if current.get(path) != fingerprints.get(path)
        and (found := compare(path, fingerprints, current, contents)) is not None
    ]
    made = encoded(current, stats) if pieces is None else updated(pieces, current, stats, moved)
    return ObservationResult(
        observations=observations,
        next_state=made,
        state_token=SCOPED_TOKEN_PREFIX + uuid.uuid4().hex,
    )


def _look(
    path: str,
    globs: list[GlobPattern],
    ignore: list[GlobPattern],
    fingerprints: dict[str, Any],
    stats: dict[str, Any],
    contents: dict[str, bytes | None],
    touched: set[str],
    settled: Callable[[list[int]], bool],
    digest: Digest,
) -> None:
    """Bring one changed path's entry up to date, as a walk would."""
    if not os.path.isabs(path) or path != os.path.normpath(path) or not _plain_text(path):
        raise _Unsure
    folder = os.path.dirname(path)
    try:
        info = os.lstat(path)
        # A symlink anywhere on the way: the walk's confinement rules decide.
        if os.path.realpath(folder) != folder:
            raise _Unsure
    except OSError as error:
        if error.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise _Unsure from error
        touched.update(_gone(path, fingerprints, stats))
        return
    if not stat.S_ISREG(info.st_mode):
        # A folder (moved in whole, its files bring no events), a link, a FIFO.
        raise _Unsure
    if not any(pattern.matches(path) for pattern in globs) or any(
        pattern.matches(path) for pattern in ignore
    ):
        if path in fingerprints:
            raise _Unsure  # tracked yet not matched: only a walk says why
        return
    touched.add(path)
    key = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
    if path in fingerprints and stats.get(path) == key:
        return
    try:
        sha, data = digest(path)
    except OSError as error:
        raise _Unsure from error
    known = fingerprints.get(path)
    fingerprints[path] = sha
    if settled(key):
        stats[path] = key
    else:
        stats.pop(path, None)
    if known != sha:
        contents[path] = data


def _gone(path: str, fingerprints: dict[str, Any], stats: dict[str, Any]) -> list[str]:
    """Forget a path that no longer exists: a tracked file, or a folder of tracked
    files; the paths forgotten."""
    prefix = path + "/"
    inside = [tracked for tracked in fingerprints if tracked.startswith(prefix)]
    gone = [tracked for tracked in (path, *inside) if tracked in fingerprints]
    for tracked in gone:
        del fingerprints[tracked]
        stats.pop(tracked, None)
    return gone


def _plain_text(path: str) -> bool:
    """Whether the name is stored as itself (not escaped: see ``as_text``)."""
    if path.isascii():
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def previous_fingerprints(state: Any) -> dict[str, Any] | None:
    """The stored fingerprints, or None when there is no baseline yet."""
    if not isinstance(state, Mapping):
        return None
    fingerprints = state.get("fingerprints")
    if isinstance(fingerprints, dict) and all(isinstance(path, str) for path in fingerprints):
        return fingerprints  # as stored: only read, never changed
    if not isinstance(fingerprints, Mapping):
        return None
    return {str(path): value for path, value in fingerprints.items()}


def previous_stats(state: Any) -> Mapping[str, Any]:
    """The stored stat keys (path -> [size, mtime_ns, ctime_ns, inode]), or {}."""
    stats = state.get("stats") if isinstance(state, Mapping) else None
    return stats if isinstance(stats, Mapping) else {}


def after_partial(
    state: tuple[Mapping[str, Any], Mapping[str, Any]], made: EncodedState
) -> tuple[dict[str, Any], dict[str, Any], Pieces]:
    """The whole state ``state`` (fingerprints, stat keys, as just decoded) with the
    folders ``made`` rewrites in place of what it held for them: what the store holds
    once ``made`` is written."""
    # Just decoded, so ours to change; anything else is copied first.
    fingerprints = state[0] if isinstance(state[0], dict) else dict(state[0])
    stats = state[1] if isinstance(state[1], dict) else dict(state[1])
    moved = {name for name in made.parts if name != INDEX_PART}
    for path in [path for path in fingerprints if path.rpartition("/")[0] in moved]:
        del fingerprints[path]
        stats.pop(path, None)
    fingerprints.update(made["fingerprints"])
    stats.update(made["stats"])
    return fingerprints, stats, Pieces(None, made.pieces.tokens)


def remembered(
    memories: dict[str, Memory], context: ObservationContext, made_for: tuple[Any, ...]
) -> Memory | None:
    """The monitor's state as this source last stored it, if the store still
    holds that state (the same token) for the same config."""
    memory = memories.get(context.monitor_id)
    if memory is not None and (
        memory.config != made_for or memory.token != context.previous_state_token
    ):
        memory = None
        del memories[context.monitor_id]
    return memory


def next_walk_state(
    memories: dict[str, Memory],
    stamp: tuple[str, str | None, tuple[Any, ...]],
    base: tuple[Iterable[str], Pieces | None],
    state: tuple[dict[str, Any], dict[str, Any]],
    unchanged: bool,
) -> Any:
    """A walk's next state (KEEP_STATE when unchanged), remembered with its token.

    ``base`` is the paths that may differ from the state compared against (every
    other one is as it was) and that state's pieces as stored (None when not stored
    in pieces): only the folders of those paths are encoded and written again.
    """
    monitor_id, token, made_for = stamp
    touched, pieces = base
    next_state: Any = KEEP_STATE
    if not unchanged and not state[0]:
        # No files: stored as one small value, which reads back as "no files" (a
        # state of no parts would read as no baseline at all).
        next_state, pieces = {"fingerprints": state[0], "stats": state[1]}, None
    elif not unchanged:
        next_state = encoded(*state) if pieces is None else updated(pieces, *state, touched)
        pieces = next_state.pieces
    remember(memories, monitor_id, token, made_for, state, pieces)
    return next_state

"""file-fingerprint: content hashes of the files matching a set of globs.

Each ``observe`` is a full reconcile (docs/architecture.md, "The life of one event"):
expand the globs, fingerprint every matched file, and compare with the fingerprints
stored in the previous state. The state also keeps each settled file's ``(size,
mtime_ns, ctime_ns, inode)`` under ``stats``, so an unchanged file is not read again, in
the daemon or in a fresh ``daemon once`` process alike (a state without ``stats``, as
older versions stored, just means every file is read once). A state that would come out
the same is not handed back, so the runtime keeps the stored one without rewriting it.
A file is "settled" when it was hashed at least :data:`RACY_WINDOW_NS` after its last
mtime and ctime: a write in the same timestamp tick as the hash could otherwise leave
all four values unchanged. The ctime is what catches a rewrite whose old mtime was
restored (``touch -r``, ``rsync -t``, an archive extraction): restoring the mtime moves
the ctime, as git's index relies on. (The wall clock, not ``context.now_ms``: mtimes
and ctimes are wall-clock facts.)

Each result also carries a state token (:func:`tree_token`: the matched paths with
their stat keys) when every file is settled. The runtime stores it beside the state and
hands it back; when the next walk gives the same token, nothing changed and the stored
state is not even read (docs/architecture.md, "Speed").

Files are hashed in chunks, so memory does not grow with a file's size; a changed
file's text (its snapshot, from which diffs are made) is kept only up to
:data:`SNAPSHOT_CAP_BYTES`. The first observation hands back each file's text as its
baseline (``ObservationResult.baselines``), within the same cap and a total of
:data:`BASELINE_TEXT_BUDGET_BYTES`, so a file's first change is shown as a diff.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from agentmonitors.sources import reach
from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.file_fingerprint import folders
from agentmonitors.sources.file_fingerprint import traits as file_fingerprint_traits
from agentmonitors.sources.file_fingerprint.observations import baselines, compare
from agentmonitors.sources.file_fingerprint.pieces import (
    EncodedState,
    Pieces,
    partial_state,
    stored_pieces,
)
from agentmonitors.sources.file_fingerprint.plain import FileFingerprintSettings, plain_config
from agentmonitors.sources.file_fingerprint.reading import SNAPSHOT_CAP_BYTES, as_text, digest
from agentmonitors.sources.file_fingerprint.scoped import (
    Memory,
    after_partial,
    next_walk_state,
    observe_changed,
    previous_fingerprints,
    previous_stats,
    remember,
    remembered,
)
from agentmonitors.sources.file_globs import (
    Confinement,
    GlobPattern,
    StatKey,
    compile_patterns,
    confined_stat_keys,
    outside_roots,
    resolve_base,
)
from agentmonitors.sources.observation import (
    KEEP_STATE,
    Observation,
    ObservationContext,
    ObservationResult,
)
from agentmonitors.untrusted import escape_undecodable

# A file modified this recently (relative to when it is hashed) is "racily clean":
# another write within the same mtime tick would leave size and mtime unchanged.
RACY_WINDOW_NS = 2_000_000_000

# A baseline keeps each file's text (within SNAPSHOT_CAP_BYTES) as its first snapshot,
# so the first change of a file is shown as a diff; this bounds the sum of those texts,
# in memory and in the store. Files past it are baselined by hash alone, as before.
BASELINE_TEXT_BUDGET_BYTES = 16 * SNAPSHOT_CAP_BYTES


def _settled(key: StatKey, at_ns: int) -> bool:
    """Whether the file's last write (``key``'s mtime and ctime) is far enough before
    ``at_ns`` to trust its stat key."""
    return at_ns - max(key[1], key[2]) >= RACY_WINDOW_NS


class FileFingerprintSource(ModelSource):
    name = "file-fingerprint"
    description = "Reports files matching globs that are created, changed or deleted."
    stateful = True
    # ``daemon once`` observes it in its own thread, with no event loop (tick_blocking).
    observes_in_place = True
    # Low: file events hint at changes, the interval is only the backstop walk.
    min_interval_ms = 500
    config_model_ref = "agentmonitors.sources.file_fingerprint.config:FileFingerprintConfig"
    # What it says about itself beyond observing (sources/traits.py).
    baseline_notes = file_fingerprint_traits.BASELINE_NOTES
    scaffold_seeds = file_fingerprint_traits.SCAFFOLD_SEEDS
    scaffold = staticmethod(file_fingerprint_traits.scaffold)
    file_hints = staticmethod(file_fingerprint_traits.file_hints)
    approval = staticmethod(reach.glob_approval)
    outside_paths = staticmethod(reach.glob_outside_paths)
    target_problem = staticmethod(file_fingerprint_traits.target_problem)
    verify_trigger = staticmethod(file_fingerprint_traits.verify_trigger)

    def __init__(self, wall_clock_ns: Callable[[], int] = time.time_ns) -> None:
        # The wall clock that judges whether a file's stat is settled (injectable so a
        # test need not wait out the racy window).
        self._wall_clock_ns = wall_clock_ns
        # Each monitor's last stored state (scoped.py), so a daemon's next observation
        # need not decode it from the store; trusted only under the token stored with it.
        self._memory: dict[str, Memory] = {}

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        # Lazy: asyncio costs `daemon once` tens of ms; whoever awaits this has it loaded.
        import asyncio

        parsed = self.observed_config(config, plain_config)
        return await asyncio.to_thread(self._reconcile, parsed, context)

    def observe_blocking(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """``observe`` in the caller's thread, for a tick run without an event loop
        (``Runtime.tick_blocking``): the same result, without asyncio or a thread."""
        return self._reconcile(self.observed_config(config, plain_config), context)

    def _reconcile(
        self, config: FileFingerprintSettings, context: ObservationContext
    ) -> ObservationResult:
        base = resolve_base(config.cwd, context.workspace_path)
        globs = compile_patterns(config.globs, base)
        workspace = context.workspace_path or base
        # The walk reads only where the permit allows (sources/permit.py): every root
        # in the workspace or approved, and a symlink never carries a read anywhere
        # else. The user's own monitors may read what they name.
        permit = context.permit
        for pattern in globs:
            permit.check_walk_root(pattern.watch_root, pattern.needs_normalising, workspace)
        ignore = compile_patterns(config.ignore, base)
        made_for = (base, tuple(config.globs), tuple(config.ignore), workspace)
        memory = remembered(self._memory, context, made_for)
        if context.changed_paths is not None:
            scoped = self._observe_changed(context, globs, ignore, memory, made_for)
            if scoped is not None:
                return scoped
        files, real, warnings = _walk(globs, ignore, context, workspace)
        walked, tokens, token = folders.walk_token(files)
        result: ObservationResult | None = None
        if token == context.previous_state_token:
            # The same files with the same stat keys as when the stored state was made,
            # every one settled then: the state stands, and is not even read.
            result = _unchanged(files, warnings, token)
        elif memory is None and context.read_parts is not None:
            # Only the folders whose token moved are read and compared (folders.py).
            result = self._partial(context, (files, real, warnings, token), walked, tokens)
        if result is not None:
            if memory is None and context.resident and result.state_token is not None:
                # A daemon reads the whole state once, so its first file event finds it
                # in memory; the walk's lists go first: decoding beside them would raise
                # the peak the process keeps as its size.
                del files, real, walked, tokens
                self._keep_stored(context, result.state_token, made_for, result)
            return result
        previous: Mapping[str, Any] | None
        pieces: Pieces | None = None
        if memory is not None:
            previous, stored, pieces = memory.fingerprints, memory.stats, memory.pieces
        else:
            previous = previous_fingerprints(context.previous_state)
            stored = previous_stats(context.previous_state) if previous is not None else {}
            if previous is not None:
                pieces = stored_pieces(context.previous_state)
        if previous is not None and _all_unchanged(files, previous, stored):
            # What the full comparison below would conclude, for a third of its cost
            # (a state stored before tokens, or by another implementation).
            kept = pieces
            state = (previous, stored)
            remember(self._memory, context.monitor_id, token, made_for, state, kept)
            return _unchanged(files, warnings, token)
        fingerprints, stats, contents, hashed = self._fingerprints(files, previous, stored, real)
        # Every file not hashed kept its stored hash and stat key: only the hashed and
        # the gone can differ from the stored state.
        gone = _gone((previous or {}, stored), fingerprints)
        observations: list[Observation] = []
        if previous is not None:
            # Only the paths whose hash moved, appeared or went can make an observation.
            differing = {path for path in hashed if previous.get(path) != fingerprints[path]}
            differing.update(path for path in gone if path in previous)
            for path in sorted(differing):
                observation = compare(path, previous, fingerprints, contents, real)
                if observation is not None:
                    observations.append(observation)
        # An unchanged state is left as stored: rewriting 10,000 files' worth of JSON
        # every tick would cost more than the whole stat-based check.
        unchanged = (
            previous is not None
            and not gone
            and all(
                previous.get(path) == fingerprints[path] and stored.get(path) == stats.get(path)
                for path in hashed
            )
        )
        settled_token = token if len(stats) == len(fingerprints) == len(files) else None
        next_state = next_walk_state(
            self._memory,
            (context.monitor_id, settled_token, made_for),
            (hashed + gone, pieces),
            (fingerprints, stats),
            unchanged,
        )
        return ObservationResult(
            observations=observations,
            baseline_texts=None if previous is not None else baselines(fingerprints, contents),
            next_state=next_state,
            outcome="no-files-matched" if not files and not observations else None,
            warnings=warnings,
            # Only a state whose every file is settled may be skipped on its token: an
            # unsettled file is hashed again until it is.
            state_token=settled_token,
        )

    def _partial(
        self,
        context: ObservationContext,
        walk: tuple[Mapping[str, StatKey], Mapping[str, str], list[str], str],
        walked: Mapping[str, list[str]],
        tokens: Mapping[str, str],
    ) -> ObservationResult | None:
        """The walk compared with the stored folders whose token moved, read alone;
        None when the stored state has no folder tokens (the whole state is read)."""
        assert context.read_parts is not None
        files, real, warnings, token = walk
        if not files:
            return None  # "no files" is stored as one value, never as an empty index
        index = context.read_parts([folders.INDEX_PART])
        stored = folders.read_index(None if index is None else index.get(folders.INDEX_PART))
        if stored is None:
            return None
        moved = folders.moved_folders(tokens, stored)
        if not moved:
            return _unchanged(files, warnings, token)
        texts = context.read_parts(moved) or {}
        previous, known = folders.merged_parts(texts)
        subset = {path: files[path] for folder in moved for path in walked.get(folder, ())}
        fingerprints, stats, contents, hashed = self._fingerprints(subset, previous, known, real)
        gone = _gone((previous, known), fingerprints)
        differing = {path for path in hashed if previous.get(path) != fingerprints[path]}
        differing.update(path for path in gone if path in previous)
        observations = [
            found
            for path in sorted(differing)
            if (found := compare(path, previous, fingerprints, contents, real)) is not None
        ]
        # What the store will hold: the moved folders' parts, and every folder's token.
        self._memory.pop(context.monitor_id, None)
        next_state = partial_state(moved, (fingerprints, stats), stored)
        # Every folder's token known: every file settled, as a tree token needs.
        settled = all((next_state.pieces.tokens or {}).values())
        return ObservationResult(
            observations=observations,
            next_state=next_state,
            outcome="no-files-matched" if not files and not observations else None,
            warnings=warnings,
            state_token=token if settled else None,
        )

    def _observe_changed(
        self,
        context: ObservationContext,
        globs: list[GlobPattern],
        ignore: list[GlobPattern],
        memory: Memory | None,
        made_for: tuple[Any, ...],
    ) -> ObservationResult | None:
        """Just the paths file events named (scoped.py), or None to walk everything."""
        assert context.changed_paths is not None
        previous: Mapping[str, Any]
        pieces: Pieces | None
        if memory is not None:
            previous, stored, pieces = memory.fingerprints, memory.stats, memory.pieces
        else:
            known = previous_fingerprints(context.previous_state)
            if known is None:
                return None
            previous, stored = known, previous_stats(context.previous_state)
            pieces = stored_pieces(context.previous_state)
        started_ns = self._wall_clock_ns()
        result = observe_changed(
            context.changed_paths,
            globs,
            ignore,
            (previous, stored),
            lambda key: _settled(key, started_ns),
            lambda path: digest(path, keep_text=True),
            lambda path, before, now, contents: compare(path, before, now, contents, {}),
            context.previous_state_token,
            pieces,
        )
        if result is None:
            return None
        if result.has_next_state:
            made: EncodedState = result.next_state
            state = (made["fingerprints"], made["stats"])
            token = result.state_token
            remember(self._memory, context.monitor_id, token, made_for, state, made.pieces)
        elif memory is None:
            token = context.previous_state_token
            remember(self._memory, context.monitor_id, token, made_for, (previous, stored), pieces)
        return result

    def _keep_stored(
        self,
        context: ObservationContext,
        token: str,
        made_for: tuple[Any, ...],
        partial: ObservationResult | None = None,
    ) -> None:
        """Keep the stored state, with what ``partial`` (an observation of the folders
        that moved) is about to store in place of those folders."""
        previous = previous_fingerprints(context.previous_state)
        if previous is None:
            return
        stored = previous_stats(context.previous_state)
        pieces = stored_pieces(context.previous_state)
        if partial is not None and partial.has_next_state:
            previous, stored, pieces = after_partial((previous, stored), partial.next_state)
        remember(self._memory, context.monitor_id, token, made_for, (previous, stored), pieces)

    def forget(self, monitor_id: str) -> None:
        """A removed monitor's remembered state (most of a big tree's memory) goes."""
        self._memory.pop(monitor_id, None)

    def _fingerprints(
        self,
        files: Mapping[str, StatKey],
        previous: Mapping[str, Any] | None,
        stored: Mapping[str, Any],
        real: Mapping[str, str],
    ) -> tuple[dict[str, str], dict[str, Any], dict[str, bytes | None], list[str]]:
        """Each file's hash (the stored one when its stat key still holds), the stat keys
        to store, the text of each file whose hash moved from a known baseline, and the
        files hashed (every other one is as stored)."""
        fingerprints: dict[str, str] = {}
        stats: dict[str, Any] = {}
        contents: dict[str, bytes | None] = {}
        hashed: list[str] = []
        known_hashes = previous if previous is not None else {}
        # A baseline keeps texts up to the budget; a later call only a changed file's.
        budget = BASELINE_TEXT_BUDGET_BYTES if previous is None else 0
        for path, info in files.items():
            known = known_hashes.get(path)
            key = stored.get(path)
            if known is not None and key == info:
                # Settled when stored, unchanged since: the stored hash stands.
                fingerprints[path] = known
                stats[path] = key
                continue
            hashed.append(path)
            started_ns = self._wall_clock_ns()
            # The text is needed for a change against a known baseline, and for the
            # baseline itself while its budget lasts.
            keep = previous is not None or info[0] <= min(budget, SNAPSHOT_CAP_BYTES)
            sha, data = digest(real.get(path, path), keep_text=keep)
            fingerprints[path] = sha
            if _settled(info, started_ns):
                stats[path] = info
            if previous is not None and known != sha:
                contents[path] = data
            elif previous is None and data is not None:
                contents[path] = data
                budget -= len(data)
        return fingerprints, stats, contents, hashed


def _walk(
    globs: list[GlobPattern], ignore: list[GlobPattern], context: ObservationContext, workspace: str
) -> tuple[Mapping[str, StatKey], dict[str, str], list[str]]:
    """The matched files with their stat keys (by the name each is shown by), the real
    name of each shown escaped (``as_text``), and a warning for each skipped link."""
    permit = context.permit
    named = outside_roots(globs, workspace) if permit.trusted else ()
    confinement = Confinement(workspace, (*permit.outside_paths, *named))
    found, skipped = confined_stat_keys(globs, ignore, confinement)
    files, real = as_text(found)
    return files, real, [escape_undecodable(link.describe()) for link in skipped]


def _gone(
    previous: tuple[Mapping[str, Any], Mapping[str, Any]], fingerprints: Mapping[str, str]
) -> list[str]:
    """The paths ``previous`` (hashes, stat keys) holds that a walk no longer does."""
    return [path for known in previous for path in known if path not in fingerprints]


def tree_token(files: Mapping[str, StatKey]) -> str:
    """A digest of the matched paths, in order, with each one's stat key, made from
    each folder's token (folders.py): equal tokens mean the same files with the same
    ``(size, mtime_ns, ctime_ns, inode)``, what ``_all_unchanged`` checks file by file."""
    return folders.walk_token(files)[2]


def _unchanged(files: Mapping[str, StatKey], warnings: list[str], token: str) -> ObservationResult:
    return ObservationResult(
        observations=[],
        next_state=KEEP_STATE,
        outcome=None if files else "no-files-matched",
        warnings=warnings,
        state_token=token,
    )


def _all_unchanged(
    files: Mapping[str, StatKey], previous: Mapping[str, Any], stored: Mapping[str, Any]
) -> bool:
    """Whether every matched file is one of ``previous``, with a hash and a stored stat
    key that still holds, and nothing else is stored: the state would come out the same."""
    if len(files) != len(previous) or len(files) != len(stored):
        return False
    stored_key = stored.get
    known = previous.get
    return all(stored_key(path) == key and known(path) is not None for path, key in files.items())

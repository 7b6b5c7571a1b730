"""file-fingerprint: content hashes of the files matching a set of globs.

Each ``observe`` is a full reconcile (spec 04 §3): expand the globs, fingerprint every
matched file, and compare with the fingerprints stored in the previous state. An
in-memory cache per ``(monitor, path)`` remembers ``(size, mtime_ns, inode, sha256)`` so
an unchanged file is not read again; a file whose mtime is within
:data:`RACY_WINDOW_NS` of the wall clock (or was when it was hashed) is always re-read,
as a write in the same timestamp tick could otherwise go unnoticed. (The wall clock, not
``context.now_ms``: mtimes are wall-clock facts.) The accepted trade-off:
rewriting a file in place with same-size content and then restoring its old mtime
defeats the cache until the file changes again (the same trade-off git makes).

Files are hashed in chunks, so memory does not grow with a file's size; a changed
file's text (its snapshot, from which diffs are made) is kept only up to
:data:`SNAPSHOT_CAP_BYTES`.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from agentmonitors.monitor.fields import Duration, GlobPatterns, OptionalGlobPatterns
from agentmonitors.sources.base import ModelSource, SourceConfig
from agentmonitors.sources.file_globs import (
    Confinement,
    compile_patterns,
    confined_files,
    exists,
    outside_roots,
    resolve_base,
)
from agentmonitors.sources.observation import (
    ChangeKind,
    Observation,
    ObservationContext,
    ObservationResult,
)

# A file modified this recently (relative to when it is hashed) is "racily clean":
# another write within the same mtime tick would leave size and mtime unchanged.
RACY_WINDOW_NS = 2_000_000_000

MIB = 1024 * 1024
# Files are hashed this much at a time, so a huge file costs one chunk of memory.
CHUNK_BYTES = MIB
# A changed file's text is kept (stored as its snapshot, diffed against the last one)
# only up to this size; above it the change is reported without a diff, since a diff
# of megabytes would be cut for the agent anyway and each snapshot lives in the store.
SNAPSHOT_CAP_BYTES = MIB

LABELS: dict[ChangeKind, str] = {
    "created": "File created",
    "modified": "File changed",
    "deleted": "File deleted",
    "descoped": "File no longer matched by globs",
}


class FileFingerprintConfig(SourceConfig):
    globs: GlobPatterns = Field(
        description="Glob pattern, or list of patterns OR-ed together, relative to cwd "
        '(e.g. "docs/**/*.md"). ** crosses folders, {a,b} picks alternatives; dotfiles '
        "match only when named.",
    )
    ignore: OptionalGlobPatterns = Field(
        default_factory=list,
        description="Pattern(s) removed from what globs matched; same base as globs.",
    )
    cwd: str | None = Field(
        default=None,
        description="Folder the globs are relative to: the workspace root when omitted; a "
        "relative path resolves under the workspace root, an absolute one is used as-is.",
    )
    interval: Duration = Field(
        default="30s", description="How often the files are re-hashed as a safety net."
    )


@dataclass(frozen=True, slots=True)
class _CachedHash:
    size: int
    mtime_ns: int
    inode: int
    sha: str
    # Hashed at least RACY_WINDOW_NS after the mtime it saw, so reusable.
    settled: bool


class FileFingerprintSource(ModelSource):
    name = "file-fingerprint"
    description = "Reports files matching globs that are created, changed or deleted."
    stateful = True
    config_model = FileFingerprintConfig

    def __init__(self) -> None:
        self._hashes: dict[str, dict[str, _CachedHash]] = {}
        self._lock = threading.Lock()

    def forget(self, monitor_id: str) -> None:
        """Drop the hash cache of a monitor that was removed."""
        with self._lock:
            self._hashes.pop(monitor_id, None)

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        parsed = self.checked_config(config)
        assert isinstance(parsed, FileFingerprintConfig)
        return await asyncio.to_thread(self._reconcile, parsed, context)

    def _reconcile(
        self, config: FileFingerprintConfig, context: ObservationContext
    ) -> ObservationResult:
        base = resolve_base(config.cwd, context.workspace_path)
        globs = compile_patterns(config.globs, base)
        workspace = context.workspace_path or base
        # A symlink never carries a read outside the workspace unless its target is
        # approved or lies within what the definition itself names (which needs approval).
        confinement = Confinement(
            workspace, (*context.approved_outside_paths, *outside_roots(globs, workspace))
        )
        files, skipped = confined_files(globs, compile_patterns(config.ignore, base), confinement)
        previous = _previous_fingerprints(context.previous_state)
        with self._lock:
            cache = self._hashes.get(context.monitor_id, {})
        fresh: dict[str, _CachedHash] = {}
        fingerprints: dict[str, str] = {}
        contents: dict[str, bytes | None] = {}
        now_ns = time.time_ns()
        for path, info in files.items():
            cached = cache.get(path)
            if (
                cached is not None
                and cached.settled
                and cached.size == info.st_size
                and cached.mtime_ns == info.st_mtime_ns
                and cached.inode == info.st_ino
                and now_ns - info.st_mtime_ns >= RACY_WINDOW_NS
                # A hash the stored state disagrees with is re-read: its text is
                # needed, and that read is the authority.
                and (previous is None or previous.get(path) == cached.sha)
            ):
                fresh[path] = cached
                fingerprints[path] = cached.sha
                continue
            started_ns = time.time_ns()
            # The text is only needed for a change against a known baseline.
            sha, data = _digest(path, keep_text=previous is not None)
            fresh[path] = _CachedHash(
                info.st_size,
                info.st_mtime_ns,
                info.st_ino,
                sha,
                settled=started_ns - info.st_mtime_ns >= RACY_WINDOW_NS,
            )
            fingerprints[path] = sha
            if previous is not None and previous.get(path) != sha:
                contents[path] = data
        with self._lock:
            self._hashes[context.monitor_id] = fresh

        observations: list[Observation] = []
        if previous is not None:
            for path in sorted(fingerprints.keys() | previous.keys()):
                observation = _compare(path, previous, fingerprints, contents)
                if observation is not None:
                    observations.append(observation)
        return ObservationResult(
            observations=observations,
            next_state={"fingerprints": fingerprints},
            outcome="no-files-matched" if not files and not observations else None,
            warnings=[link.describe() for link in skipped],
        )


def _compare(
    path: str,
    previous: Mapping[str, Any],
    fingerprints: dict[str, str],
    contents: dict[str, bytes | None],
) -> Observation | None:
    current = fingerprints.get(path)
    if current is None:
        return _absent(path, "descoped" if exists(path) else "deleted", previous[path])
    if path in previous and previous[path] == current:
        return None
    data = contents[path]
    if path in previous:
        return _present(path, "modified", current, data, previous[path])
    return _present(path, "created", current, data)


def _present(
    path: str, kind: ChangeKind, current: str, data: bytes | None, previous: Any = None
) -> Observation:
    hashes: dict[str, Any] = {"filePath": path}
    if kind == "modified":
        hashes["previousHash"] = previous
    hashes["currentHash"] = current
    title = f"{LABELS[kind]}: {path}"
    summary = title
    if data is None:
        summary = f"{title} (over the {SNAPSHOT_CAP_BYTES // MIB} MiB snapshot cap: no diff)"
    return Observation(
        title=title,
        summary=summary,
        payload=hashes,
        snapshot=dict(hashes),
        snapshot_text=(
            None if data is None or b"\0" in data else data.decode("utf-8", errors="replace")
        ),
        object_key=path,
        query_scope={"filePath": path},
        change_kind=kind,
    )


def _absent(path: str, kind: ChangeKind, previous: Any) -> Observation:
    title = f"{LABELS[kind]}: {path}"
    return Observation(
        title=title,
        summary=title,
        payload={"filePath": path, "previousHash": previous},
        snapshot={"filePath": path, "previousHash": previous},
        object_key=path,
        query_scope={"filePath": path},
        change_kind=kind,
        salience="high" if kind == "deleted" else None,
    )


def _previous_fingerprints(state: Any) -> dict[str, Any] | None:
    """The stored fingerprints, or None when there is no baseline yet."""
    if not isinstance(state, Mapping):
        return None
    fingerprints = state.get("fingerprints")
    if not isinstance(fingerprints, Mapping):
        return None
    return {str(path): value for path, value in fingerprints.items()}


def _digest(path: str, *, keep_text: bool) -> tuple[str, bytes | None]:
    """The file's sha256, read in chunks, and its bytes when wanted and within the cap.

    Memory stays at one chunk plus at most :data:`SNAPSHOT_CAP_BYTES` whatever the
    file's size; a file over the cap gives None (its change is reported without a diff).
    """
    digest = hashlib.sha256()
    kept: bytearray | None = bytearray() if keep_text else None
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                if kept is not None:
                    if len(kept) + len(chunk) > SNAPSHOT_CAP_BYTES:
                        kept = None
                    else:
                        kept += chunk
    except OSError as error:
        raise OSError(error.errno, f"Cannot read matched file {path}: {error.strerror}") from error
    return digest.hexdigest(), None if kept is None else bytes(kept)

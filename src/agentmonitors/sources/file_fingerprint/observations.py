"""What a file-fingerprint change looks like: the observation of a file created,
changed, deleted or no longer matched, and what a baseline keeps of each file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.sources.file_fingerprint.reading import MIB, SNAPSHOT_CAP_BYTES
from agentmonitors.sources.file_globs import exists
from agentmonitors.sources.observation import BaselineTexts, ChangeKind, Observation
from agentmonitors.untrusted import restore_undecodable

LABELS: dict[ChangeKind, str] = {
    "created": "File created",
    "modified": "File changed",
    "deleted": "File deleted",
    "descoped": "File no longer matched by globs",
}


def compare(
    path: str,
    previous: Mapping[str, Any],
    fingerprints: dict[str, str],
    contents: dict[str, bytes | None],
    real: Mapping[str, str],
) -> Observation | None:
    current = fingerprints.get(path)
    if current is None:
        on_disk = real.get(path) or restore_undecodable(path)
        return _absent(path, "descoped" if exists(on_disk) else "deleted", previous[path])
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


def baselines(
    fingerprints: Mapping[str, str], contents: Mapping[str, bytes | None]
) -> BaselineTexts:
    """What the baseline saw of each text file it kept, as its first snapshot."""
    texts = {
        path: data.decode("utf-8", errors="replace")
        for path, data in contents.items()
        if data is not None and b"\0" not in data
    }

    def observation(path: str) -> Observation:
        return Observation(
            title=f"Baseline: {path}",
            snapshot={"filePath": path, "currentHash": fingerprints[path]},
            snapshot_text=texts[path],
            object_key=path,
        )

    return BaselineTexts(texts, observation)


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

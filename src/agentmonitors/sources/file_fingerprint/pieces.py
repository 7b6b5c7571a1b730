"""A file-fingerprint state's JSON text, folder by folder, stored one row per folder.

Encoding a 100,000-file state whole, and writing it as one value, costs more than
everything else a change does. :class:`Pieces` keeps each folder's entries encoded as
a small JSON object (``{"fingerprints": {...}, "stats": {...}}``); the store writes
each as a part of the state (store/state_parts.py), so one changed file re-encodes and
rewrites its folder only. Unchanged folders' texts are shared by identity between a
state and the next, which is how the store tells what it need not write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


class Pieces:
    """Each folder's part text. Never changed once made (:func:`updated` copies).
    ``stored`` says the texts are what the store holds in parts (when the state token
    proves the state is the stored one)."""

    __slots__ = ("stored", "texts")

    def __init__(self, texts: dict[str, str], *, stored: bool) -> None:
        self.texts = texts
        self.stored = stored


class EncodedState(dict[str, Any]):
    """A file-fingerprint state (``fingerprints``, ``stats``) the store writes in
    parts: its folders' texts, against those of the state it was made from."""

    def __init__(
        self,
        fingerprints: Mapping[str, Any],
        stats: Mapping[str, Any],
        pieces: Pieces,
        base: Pieces | None,
    ) -> None:
        super().__init__(fingerprints=fingerprints, stats=stats)
        self.pieces = pieces
        self.base = base

    def state_parts(self) -> tuple[Mapping[str, str], Mapping[str, str] | None]:
        """Every folder's text, and those the store holds now (None: unknown)."""
        base = self.base
        return self.pieces.texts, base.texts if base is not None and base.stored else None


def _members(paths: Iterable[str], values: Mapping[str, Any]) -> str:
    chosen = {path: values[path] for path in sorted(paths) if path in values}
    return json.dumps(chosen, ensure_ascii=False, separators=(",", ":"))


def _text(paths: Iterable[str], fingerprints: Mapping[str, Any], stats: Mapping[str, Any]) -> str:
    paths = sorted(paths)
    return (
        '{"fingerprints":'
        + _members(paths, fingerprints)
        + ',"stats":'
        + _members(paths, stats)
        + "}"
    )


def pieces_of(fingerprints: Mapping[str, Any], stats: Mapping[str, Any]) -> Pieces:
    """The pieces of a whole state (as costly as encoding it once), not yet stored."""
    folders: dict[str, list[str]] = {}
    for path in fingerprints:
        folders.setdefault(path.rpartition("/")[0], []).append(path)
    texts = {folder: _text(paths, fingerprints, stats) for folder, paths in folders.items()}
    return Pieces(texts, stored=False)


def stored_pieces(state: Any) -> Pieces | None:
    """The pieces of a state as read from its parts (``state.parts``: each folder's
    text as stored), or None for a state stored as one value."""
    parts = getattr(state, "parts", None)
    return Pieces(parts, stored=True) if isinstance(parts, dict) else None


def _paths_in(text: str | None) -> set[str]:
    """The paths a folder's text holds (decoded only for a folder a change touched,
    so nothing keeps every folder's paths apart from the state itself)."""
    if text is None:
        return set()
    try:
        value = json.loads(text)
    except ValueError:
        return set()
    found = value.get("fingerprints") if isinstance(value, dict) else None
    return set(found) if isinstance(found, dict) else set()


def updated(
    pieces: Pieces,
    fingerprints: Mapping[str, Any],
    stats: Mapping[str, Any],
    touched: Iterable[str],
) -> Pieces:
    """``pieces`` for the state ``fingerprints``/``stats`` that differs from theirs
    only at ``touched`` paths: each touched folder is encoded again, the rest shared.
    The result is what the store will hold once the state is written."""
    texts = dict(pieces.texts)
    folders: dict[str, set[str]] = {}
    for path in touched:
        folder = path.rpartition("/")[0]
        paths = folders.get(folder)
        if paths is None:
            paths = folders[folder] = _paths_in(texts.get(folder))
        if path in fingerprints:
            paths.add(path)
        else:
            paths.discard(path)
    for folder, paths in folders.items():
        if paths:
            texts[folder] = _text(paths, fingerprints, stats)
        else:
            texts.pop(folder, None)
    return Pieces(texts, stored=True)

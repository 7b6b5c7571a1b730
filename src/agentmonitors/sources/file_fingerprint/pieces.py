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
    """Each folder's tracked paths and its part text. Never changed once made
    (:func:`updated` copies). ``stored`` says the texts are what the store holds in
    parts (when the state token proves the state is the stored one)."""

    __slots__ = ("folders", "stored", "texts")

    def __init__(
        self, folders: dict[str, set[str]], texts: dict[str, str], *, stored: bool
    ) -> None:
        self.folders = folders
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


def _folders(fingerprints: Iterable[str]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for path in fingerprints:
        folders.setdefault(path.rpartition("/")[0], set()).add(path)
    return folders


def pieces_of(fingerprints: Mapping[str, Any], stats: Mapping[str, Any]) -> Pieces:
    """The pieces of a whole state (as costly as encoding it once), not yet stored."""
    folders = _folders(fingerprints)
    texts = {folder: _text(paths, fingerprints, stats) for folder, paths in folders.items()}
    return Pieces(folders, texts, stored=False)


def stored_pieces(state: Any, fingerprints: Mapping[str, Any]) -> Pieces | None:
    """The pieces of a state as read from its parts (``state.parts``: each folder's
    text as stored), or None for a state stored as one value."""
    parts = getattr(state, "parts", None)
    if not isinstance(parts, dict):
        return None
    folders = _folders(fingerprints)
    if folders.keys() != parts.keys():
        return None  # not parts this source wrote: write them all again
    return Pieces(folders, parts, stored=True)


def updated(
    pieces: Pieces,
    fingerprints: Mapping[str, Any],
    stats: Mapping[str, Any],
    touched: Iterable[str],
) -> Pieces:
    """``pieces`` for the state ``fingerprints``/``stats`` that differs from theirs
    only at ``touched`` paths: each touched folder is encoded again, the rest shared.
    The result is what the store will hold once the state is written."""
    folders = dict(pieces.folders)
    texts = dict(pieces.texts)
    copied: set[str] = set()
    for path in touched:
        folder = path.rpartition("/")[0]
        if folder not in copied:
            copied.add(folder)
            folders[folder] = set(folders.get(folder, ()))
        if path in fingerprints:
            folders[folder].add(path)
        else:
            folders[folder].discard(path)
    for folder in copied:
        paths = folders[folder]
        if paths:
            texts[folder] = _text(paths, fingerprints, stats)
        else:
            del folders[folder]
            texts.pop(folder, None)
    return Pieces(folders, texts, stored=True)


def touched_between(
    before: tuple[Mapping[str, Any], Mapping[str, Any]],
    after: tuple[Mapping[str, Any], Mapping[str, Any]],
) -> set[str]:
    """The paths whose hash or stat key differs between two states."""
    touched: set[str] = set()
    for old, new in zip(before, after, strict=True):
        touched.update(path for path, value in new.items() if old.get(path) != value)
        touched.update(path for path in old if path not in new)
    return touched

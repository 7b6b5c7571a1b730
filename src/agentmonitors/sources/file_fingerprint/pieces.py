"""A file-fingerprint state's JSON text, folder by folder, stored one row per folder.

Encoding a 100,000-file state whole, and writing it as one value, costs more than
everything else a change does. Each folder's entries are encoded as a small JSON object
(``{"fingerprints": {...}, "stats": {...}}``), stored as a part of the state
(store/state_parts.py); a change hands the store the texts of the folders it touched
only. :class:`Pieces` is what that needs to be kept between changes: which paths each
folder holds (not the texts, which would double the state's memory) and each folder's
token, written with the parts as one more part (folders.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentmonitors.sources.file_fingerprint.folders import (
    INDEX_KEY,
    INDEX_PART,
    group,
    index_text,
    state_tokens,
)


class Pieces:
    """Each folder's paths in a state the store holds in parts (one per folder).
    Never changed once made (:func:`updated` copies). ``folders`` is None until a
    change needs it (a state just read from its parts), and so is ``tokens`` (each
    folder's token, folders.py) when the stored parts came without them."""

    __slots__ = ("folders", "tokens")

    def __init__(
        self,
        folders: dict[str, tuple[str, ...]] | None,
        tokens: dict[str, str | None] | None = None,
    ) -> None:
        self.folders = folders
        self.tokens = tokens


class EncodedState(dict[str, Any]):
    """A file-fingerprint state (``fingerprints``, ``stats``) the store writes in
    parts: every folder's text (``whole``), or those of the folders that moved since
    the stored state (None for a folder gone)."""

    def __init__(
        self,
        fingerprints: Mapping[str, Any],
        stats: Mapping[str, Any],
        parts: dict[str, str | None],
        *,
        whole: bool,
        pieces: Pieces,
    ) -> None:
        super().__init__(fingerprints=fingerprints, stats=stats)
        self.parts = parts
        self.whole = whole
        # What the store holds once this state is written (the token vouches).
        self.pieces = pieces

    def state_parts(self) -> tuple[Mapping[str, str | None], bool]:
        return self.parts, self.whole


def _members(paths: Iterable[str], values: Mapping[str, Any]) -> str:
    chosen = {path: values[path] for path in paths if path in values}
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


def _index(fingerprints: Iterable[str]) -> dict[str, tuple[str, ...]]:
    # Tuples, not sets: a 100-entry set is five times the size, kept for every folder.
    return {folder: tuple(sorted(paths)) for folder, paths in group(fingerprints).items()}


def encoded(fingerprints: dict[str, Any], stats: dict[str, Any]) -> EncodedState:
    """A whole state to store in parts (as costly as encoding it once)."""
    folders = _index(fingerprints)
    texts: dict[str, str | None] = {
        folder: _text(paths, fingerprints, stats) for folder, paths in folders.items()
    }
    tokens = state_tokens(folders, stats)
    texts[INDEX_PART] = index_text(tokens)
    return EncodedState(fingerprints, stats, texts, whole=True, pieces=Pieces(folders, tokens))


def stored_pieces(state: Any) -> Pieces | None:
    """The pieces of a state read from its parts (``state.parts`` names them), or None
    for a state stored as one value (a change then writes it whole, in parts)."""
    if not isinstance(getattr(state, "parts", None), tuple):
        return None
    tokens = state.get(INDEX_KEY)
    if not isinstance(tokens, dict):
        return Pieces(None)
    return Pieces(None, {str(folder): token for folder, token in tokens.items()})


def updated(
    pieces: Pieces,
    fingerprints: dict[str, Any],
    stats: dict[str, Any],
    touched: Iterable[str],
) -> EncodedState:
    """The state ``fingerprints``/``stats``, which differs from the stored one (whose
    pieces are ``pieces``) only at ``touched`` paths: the texts of their folders only."""
    known = pieces.folders
    folders = _index(fingerprints) if known is None else dict(known)
    changed: dict[str, set[str]] = {}
    for path in touched:
        folder = path.rpartition("/")[0]
        paths = changed.get(folder)
        if paths is None:
            paths = changed[folder] = set(folders.get(folder, ()))
        if path in fingerprints:
            paths.add(path)
        else:
            paths.discard(path)
    moved: dict[str, str | None] = {}
    for folder, paths in changed.items():
        if paths:
            folders[folder] = tuple(sorted(paths))
            moved[folder] = _text(paths, fingerprints, stats)
        else:
            folders.pop(folder, None)
            moved[folder] = None
    if pieces.tokens is None:
        tokens = state_tokens(folders, stats)
    else:
        tokens = {folder: token for folder, token in pieces.tokens.items() if folder in folders}
        tokens.update(
            state_tokens(folders, stats, [folder for folder in moved if folder in folders])
        )
    moved[INDEX_PART] = index_text(tokens)
    return EncodedState(fingerprints, stats, moved, whole=False, pieces=Pieces(folders, tokens))


def partial_state(
    moved: Iterable[str],
    state: tuple[dict[str, Any], dict[str, Any]],
    tokens: Mapping[str, str | None],
) -> EncodedState:
    """The parts to store after comparing only the ``moved`` folders: their entries
    are ``state`` (fingerprints, stat keys); every other folder stays as stored, and
    ``tokens`` are the stored folders' tokens."""
    fingerprints, stats = state
    folders = group(sorted(fingerprints))
    moved = set(moved)
    made = {folder: token for folder, token in tokens.items() if folder not in moved}
    made.update(state_tokens(folders, stats, moved))
    parts: dict[str, str | None] = {
        folder: _text(folders[folder], fingerprints, stats) if folder in folders else None
        for folder in sorted(moved)
    }
    parts[INDEX_PART] = index_text(made)
    return EncodedState(fingerprints, stats, parts, whole=False, pieces=Pieces(None, made))

"""Folder tokens: what lets a fresh ``daemon once`` read only the folders that moved.

A file-fingerprint state is stored one part per folder (pieces.py). Beside the parts
sits one more, :data:`INDEX_PART`, holding each folder's token: a digest of the
folder's file paths, in order, with each one's stat key ``(size, mtime_ns, ctime_ns,
inode)``, made from the state itself (:func:`state_tokens`), and None when a file of
the folder has no stored stat key (it was not settled when hashed). A walk makes the
same digest of what it found (:func:`walk_tokens`); a folder whose token is equal
holds the same files with the same stat keys as the stored state, which is what the
whole comparison would check file by file, so only the folders whose token moved (or
that appeared, or went) are read and compared (docs/architecture.md, "Speed").

The stat keys carry the whole argument, as the tree token's did: a file rewritten
moves its mtime and ctime (a restored mtime still moves the ctime), and a file
written within the racy window of its hash has no stored stat key, so its folder has
no token and is always read. The index is written with the parts by every writer of
parts (``encoded``/``updated``); a state written as one value drops its parts, the
index with them, and is compared whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentmonitors.fastpath.digests import blake2b
from agentmonitors.sources.file_globs import StatKey

# The part holding each folder's token; a folder's part is named by its path, which
# never starts with "#" (matched paths are absolute).
INDEX_PART = "#folders"
INDEX_KEY = "folderTokens"
TOKEN_FORMAT = "ff2"
_MASK = 0xFFFFFFFFFFFFFFFF


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


def folder_token(paths: list[str], keys: Iterable[Any]) -> str | None:
    """The token of one folder's ``paths`` (sorted) with their stat keys, or None when
    one has none. The keys go through ``hash()`` of their tuple, which is not salted for
    integers, so every process of one Python agrees (another Python: one full read)."""
    kept = tuple(tuple(key) for key in keys if isinstance(key, list | tuple))
    if len(kept) != len(paths):
        return None
    names = blake2b("\0".join(paths).encode("utf-8", "surrogateescape"), digest_size=12)
    return f"{len(paths)}:{names.hexdigest()}:{hash(kept) & _MASK:016x}"


def group(paths: Iterable[str]) -> dict[str, list[str]]:
    """The paths of each folder, in the order given."""
    folders: dict[str, list[str]] = {}
    for path in paths:
        folders.setdefault(folder_of(path), []).append(path)
    return folders


def walk_tokens(folders: Mapping[str, list[str]], files: Mapping[str, StatKey]) -> dict[str, str]:
    """Each walked folder's token (the walk's paths are sorted, each one has a key)."""
    made: dict[str, str] = {}
    for folder, paths in folders.items():
        token = folder_token(paths, [files[path] for path in paths])
        assert token is not None
        made[folder] = token
    return made


def state_tokens(
    folders: Mapping[str, Iterable[str]],
    stats: Mapping[str, Any],
    only: Iterable[str] | None = None,
) -> dict[str, str | None]:
    """The token of each folder of a state (of ``only`` those, when given)."""
    made: dict[str, str | None] = {}
    for folder in folders if only is None else only:
        paths = sorted(folders.get(folder, ()))
        if paths:
            made[folder] = folder_token(paths, [stats.get(path) for path in paths])
    return made


def tree_token(tokens: Mapping[str, str], files: int) -> str:
    """The state token of a whole walk of ``files`` files, from its folders' tokens:
    equal tokens mean the same files with the same stat keys (what
    ``_all_unchanged`` checks)."""
    joined = "\0".join(f"{folder}\0{token}" for folder, token in tokens.items())
    digest = blake2b(joined.encode("utf-8", "surrogateescape"), digest_size=20)
    return f"{TOKEN_FORMAT}:{files}:{digest.hexdigest()}"


def walk_token(
    files: Mapping[str, StatKey],
) -> tuple[dict[str, list[str]], dict[str, str], str]:
    """A walk's folders, their tokens, and its tree token."""
    walked = group(files)
    tokens = walk_tokens(walked, files)
    return walked, tokens, tree_token(tokens, len(files))


def index_text(tokens: Mapping[str, str | None]) -> str:
    return json.dumps({INDEX_KEY: dict(sorted(tokens.items()))}, ensure_ascii=False)


def read_index(text: str | None) -> dict[str, str | None] | None:
    """The folder tokens of an index part's text, or None when it holds none."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    tokens = value.get(INDEX_KEY) if isinstance(value, dict) else None
    if not isinstance(tokens, dict):
        return None
    return {
        str(folder): token if isinstance(token, str) else None for folder, token in tokens.items()
    }


def moved_folders(walked: Mapping[str, str], stored: Mapping[str, str | None]) -> list[str]:
    """The folders to read and compare: a token that moved or was never settled, a
    folder new to the walk, and a folder the walk no longer finds."""
    moved = [folder for folder, token in walked.items() if stored.get(folder) != token]
    moved += [folder for folder in stored if folder not in walked]
    return moved


def merged_parts(texts: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fingerprints and stat keys held by the folder parts ``texts``."""
    fingerprints: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    for name, text in texts.items():
        if name == INDEX_PART:
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        found = value.get("fingerprints")
        if isinstance(found, dict):
            fingerprints.update(found)
        found = value.get("stats")
        if isinstance(found, dict):
            stats.update(found)
    return fingerprints, stats

"""The object a user means by the key they typed.

A file-fingerprint monitor stores each file under its absolute path, while a user (or an
agent) names it as they see it: relative to the project, or to the folder they stand in.
An exact stored key always wins; otherwise a relative key is tried against the caller's
folder, then the project's, and an absolute one through its symlinks, and the first that
is stored is the object. Keys that are not paths (a URL, a ref) only ever match exactly.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
from collections.abc import Collection, Iterator

__all__ = ["MAX_LISTED_KEYS", "event_object_keys", "key_listing", "resolve_object_key"]

MAX_LISTED_KEYS = 50
"""An unknown or ambiguous object lists at most this many keys (newest first)."""


def _spellings(given: str, *, workspace: str | None, cwd: str | None) -> Iterator[str]:
    bases = [""] if os.path.isabs(given) else [base for base in (cwd, workspace) if base]
    for base in bases:
        joined = os.path.normpath(os.path.join(base, given))
        yield joined
        yield os.path.realpath(joined)


def resolve_object_key(
    given: str, stored: Collection[str], *, workspace: str | None, cwd: str | None
) -> str | None:
    """The stored key ``given`` names, or ``None`` when it names none of ``stored``."""
    if given in stored:
        return given
    for spelling in _spellings(given, workspace=workspace, cwd=cwd):
        if spelling in stored:
            return spelling
    return None


def key_listing(keys: list[str], monitor_id: str) -> str:
    """The keys an unknown one could have been, cut at :data:`MAX_LISTED_KEYS` with the
    command that lists them all."""
    listing = ", ".join(keys[:MAX_LISTED_KEYS]) if keys else "none yet"
    if len(keys) > MAX_LISTED_KEYS:
        listing += (
            f" and {len(keys) - MAX_LISTED_KEYS} more;"
            f" `agentmonitors summary {shlex.quote(monitor_id)} --all` lists them"
        )
    return listing


def event_object_keys(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None
) -> list[str]:
    """The objects with a stored event, most recently changed first."""
    rows = conn.execute(
        "SELECT COALESCE(object_key, monitor_id) AS object, MAX(created_at) AS at, MAX(id)"
        " FROM monitor_events WHERE monitor_id = ? AND workspace_path IS ?"
        " GROUP BY object ORDER BY at DESC, object",
        (monitor_id, workspace),
    ).fetchall()
    return [str(row[0]) for row in rows]

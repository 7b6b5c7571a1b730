"""What ``doctor`` and ``daemon status`` say about the database itself: its size on
disk, the oldest event it keeps, whether it is intact, whether the disk let it write."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any
from urllib.parse import quote

from agentmonitors.clock import iso_from_ms
from agentmonitors.store.database import Database, StoreError, is_memory
from agentmonitors.store.retention import oldest_kept


def file_sizes(db_path: str) -> dict[str, int]:
    """Bytes of the database file and of its write-ahead log (0 when absent)."""
    sizes = {"sizeBytes": 0, "walBytes": 0}
    if is_memory(db_path):
        return sizes
    for key, suffix in (("sizeBytes", ""), ("walBytes", "-wal")):
        with contextlib.suppress(OSError):
            sizes[key] = os.path.getsize(db_path + suffix)
    return sizes


def quick_check(db: Database) -> str:
    """``ok``, or what SQLite's ``PRAGMA quick_check`` found (its first lines)."""
    try:
        with db.read() as conn:
            rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    except (StoreError, sqlite3.Error) as error:
        return str(error)
    return "; ".join(rows) or "no answer"


def quick_check_file(db_path: str) -> str:
    """:func:`quick_check` on a connection of its own, read-only: a running daemon runs it
    in a thread, so checking a large file (about a second for 150 MiB) holds neither its
    loop nor its lock (a reader never blocks the writer in WAL mode)."""
    if is_memory(db_path):
        return "ok"
    uri = "file:" + quote(os.path.abspath(db_path), safe="/") + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error as error:
        return str(error)
    try:
        rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.Error as error:
        return str(error)
    finally:
        conn.close()
    return "; ".join(rows) or "no answer"


def disk_full(db: Database) -> dict[str, Any] | None:
    """Since when writes have found no room, and SQLite's words; None while they work."""
    if db.full_since_ms is None:
        return None
    return {"since": iso_from_ms(db.full_since_ms), "error": db.full_error}


def database_facts(db: Database, db_path: str) -> dict[str, Any]:
    """Size, write-ahead log, oldest event kept and the disk-full state, for status."""
    try:
        oldest = oldest_kept(db)
    except StoreError:
        oldest = None
    return {
        **file_sizes(db_path),
        "oldestEventAt": None if oldest is None else iso_from_ms(oldest * 1000),
        "diskFull": disk_full(db),
    }


def human_bytes(size: int) -> str:
    """``812 B``, ``3.4 KiB``, ``12.0 MiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"

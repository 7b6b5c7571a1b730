"""The workspace database as ``doctor`` reads it with no daemon: read-only, untouched."""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from agentmonitors.store.database import Database, is_memory


class ReadOnlyDatabase(Database):
    """The workspace database opened read-only: no migration, no journal change, no chmod.

    ``doctor`` with no daemon must leave the file's bytes and times as they were.
    """

    def _open(self) -> sqlite3.Connection:
        path = os.path.abspath(self.path)
        # With no write-ahead log beside it the file holds everything committed, and
        # ``immutable`` reads it without creating the log and shared-memory files a
        # plain read-only open leaves behind; a log present (a daemon that died) must
        # be read, and then its files exist already.
        mode = "ro" if os.path.exists(path + "-wal") else "ro&immutable=1"
        uri = "file:" + _uri_path(path) + "?mode=" + mode
        conn = sqlite3.connect(
            uri, uri=True, timeout=self.busy_timeout_ms / 1000, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA query_only = ON")
            # Connecting reads nothing; a file that is no database fails here, at open.
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn


def _uri_path(path: str) -> str:
    return quote(path, safe="/")


def open_read_only(db_path: str) -> Database | None:
    """The database if its file exists, opened read-only; None when there is none."""
    if is_memory(db_path) or not os.path.isfile(db_path):
        return None
    return ReadOnlyDatabase(db_path)

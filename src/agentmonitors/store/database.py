"""Opening the database: location, owner-only permissions, pragmas and transactions."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.paths import prepare_private_dir
from agentmonitors.store.schema import SCHEMA_VERSION, migrate

log = get_logger("agentmonitors.store")

BUSY_TIMEOUT_MS = 5000
# The write-ahead log is cut back to this after a checkpoint, so one large transaction
# does not leave a large file behind for good (docs/durability.md).
WAL_SIZE_LIMIT = 4 * 1024 * 1024
# Below this much free space a failed write is a full disk, not some other I/O error.
_FULL_BELOW_BYTES = 1024 * 1024
_SIDECARS = ("", "-wal", "-shm", "-journal")
_WAL_FILES = ("-wal", "-shm")
_tightened: set[str] = set()
_warned: list[str] = []


class StoreError(Exception):
    """The database could not be opened or written; the message says what to do."""


class StoreBusyError(StoreError):
    """Another process held the database past the busy timeout."""


class StoreFullError(StoreError):
    """The disk (or the process's file size limit) has no room for the write."""


def _no_room(db_path: str) -> bool:
    """Whether the database's file system, or this process's file size limit, is full."""
    if is_memory(db_path):
        return False
    try:
        info = os.statvfs(os.path.dirname(os.path.abspath(db_path)))
    except OSError:
        return False
    if info.f_bavail * info.f_frsize < _FULL_BELOW_BYTES:
        return True
    # Lazy: only a failed write needs it, and the hook path never imports resource.
    import resource

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    for suffix in ("", "-wal", "-journal"):
        with contextlib.suppress(OSError):
            if os.path.getsize(db_path + suffix) + 65_536 >= limit:
                return True
    return limit < 65_536


def is_full(error: sqlite3.Error, db_path: str) -> bool:
    """SQLITE_FULL, or a failed write on a file system (or size limit) with no room.

    SQLite reports ENOSPC as SQLITE_FULL but a write refused by the file size limit
    (EFBIG) as a plain I/O error; the room left tells the two apart.
    """
    code = getattr(error, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL:
        return True
    return isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_IOERR and _no_room(db_path)


def _warn_once(message: str) -> None:
    if not _warned:
        _warned.append(message)
        log.warning("%s", message)


def _tighten(path: str, mode: int) -> None:
    """chmod ``path`` to ``mode`` without following a symlink planted in its place."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or stat.S_IMODE(info.st_mode) == mode:
        return
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISDIR(info.st_mode):
        flags |= os.O_DIRECTORY
    try:
        fd = os.open(path, flags)
    except OSError as error:
        _warn_once(f"could not tighten permissions of {path}: {error.strerror}")
        return
    try:
        os.fchmod(fd, mode)
    except PermissionError as error:
        _warn_once(f"could not tighten permissions of {path}: {error.strerror}")
    finally:
        os.close(fd)


def prepare_private_directory(path: str) -> None:
    """Create ``path`` owner-only (see ``paths.prepare_private_dir``)."""
    try:
        prepare_private_dir(path)
    except PermissionError as error:
        _warn_once(f"could not tighten permissions of {path}: {error.strerror}")


def tighten_database_files(db_path: str) -> None:
    """Make the database and its sidecars 0600, once per process per path."""
    if db_path in _tightened:
        return
    _tightened.add(db_path)
    for suffix in _SIDECARS:
        _tighten(db_path + suffix, 0o600)


def is_memory(db_path: str) -> bool:
    return db_path == ":memory:" or db_path.startswith("file::memory:")


def _translate(error: sqlite3.Error, db_path: str, waited_ms: int) -> StoreError:
    text = str(error)
    if is_full(error, db_path):
        return StoreFullError(
            f"disk full: database {db_path} cannot be written ({text}); nothing stored is"
            " lost, and writing resumes once space is freed"
        )
    if "locked" in text or "busy" in text:
        return StoreBusyError(
            f"database {db_path} is locked by another process "
            f"(waited {waited_ms / 1000:g} s); try again once it finishes"
        )
    return StoreError(f"database {db_path}: {text}")


class Database:
    """One connection to a workspace database, shared by the threads of one process.

    Every write goes through ``write()``: a ``BEGIN IMMEDIATE`` transaction under a
    process-wide lock, so read-then-write sequences (insert an event and project it,
    decide a claim and apply it) are atomic against this process's other work and,
    through SQLite's write lock, against other processes.
    """

    def __init__(self, path: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self.full_since_ms: int | None = None
        """Wall time (ms) of the first write that found no room, until one succeeds."""
        self.full_error: str | None = None
        try:
            self.conn = self._open()
        except sqlite3.Error as error:
            raise _translate(error, path, busy_timeout_ms) from error
        # The files the connection was opened on; see ``file_problem`` and ``reopen``.
        self.identity = self._identity(self.path, os.stat)
        self._sidecars = self._sidecar_identities()

    @staticmethod
    def _identity(path: str, examine: Callable[[str], os.stat_result]) -> tuple[int, int] | None:
        if is_memory(path):
            return None
        try:
            info = examine(path)
        except OSError:
            return None
        return (info.st_dev, info.st_ino)

    def _sidecar_identities(self) -> dict[str, tuple[int, int]]:
        """The write-ahead log files next to the open database (SQLite resolves links)."""
        if is_memory(self.path):
            return {}
        real = os.path.realpath(self.path)
        found = {real + suffix: self._identity(real + suffix, os.lstat) for suffix in _WAL_FILES}
        return {path: identity for path, identity in found.items() if identity is not None}

    def file_problem(self) -> str | None:
        """``"deleted"`` or ``"replaced"`` when the path no longer names the open file.

        SQLite keeps writing to a file unlinked under it, so everything written after
        would vanish at the next open; callers check this regularly and reopen.
        """
        if self.identity is None:
            return None
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError:
            return None  # cannot tell (a permission change): keep what works
        if (info.st_dev, info.st_ino) != self.identity:
            return "replaced"
        # Noted while healthy: the log may appear only after the first transaction.
        self._sidecars = self._sidecar_identities()
        return None

    def reopen(self) -> None:
        """Close the connection and open whatever is at the path now (a fresh store if
        nothing is)."""
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
            # SQLite leaves the old file's write-ahead log behind when the file moved;
            # a new connection would read it as the content of whatever is at the path
            # now. Only the sidecars this connection made are removed: a replacement
            # brought with its own log keeps it.
            for path, identity in self._sidecars.items():
                if self._identity(path, os.lstat) == identity:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
            _tightened.discard(self.path)
            try:
                self.conn = self._open()
            except sqlite3.Error as error:
                raise _translate(error, self.path, self.busy_timeout_ms) from error
            self.identity = self._identity(self.path, os.stat)
            self._sidecars = self._sidecar_identities()

    def _open(self) -> sqlite3.Connection:
        if not is_memory(self.path):
            parent = os.path.dirname(os.path.abspath(self.path))
            prepare_private_directory(parent)
        old = os.umask(0o077)
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        finally:
            os.umask(old)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if not is_memory(self.path):
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
            conn.execute("PRAGMA foreign_keys = ON")
            # Only a database behind our schema needs the write lock to migrate, so
            # opening never waits on a busy daemon when there is nothing to do.
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                with self._transaction(conn):
                    migrate(conn, new_id)
        except BaseException:
            conn.close()
            raise
        if not is_memory(self.path):
            tighten_database_files(self.path)
        return conn

    @contextlib.contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                # A COMMIT that failed (a full disk) can leave the transaction open;
                # the next BEGIN would then fail forever.
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; SQLite errors surface as ``StoreError``."""
        try:
            with self._transaction(self.conn) as conn:
                yield conn
        except sqlite3.Error as error:
            translated = _translate(error, self.path, self.busy_timeout_ms)
            if isinstance(translated, StoreFullError):
                if self.full_since_ms is None:
                    self.full_since_ms = time.time_ns() // 1_000_000
                    log.warning("%s", translated)
                self.full_error = str(error)
            raise translated from error
        if self.full_since_ms is not None:
            log.warning("the database %s is written again: the disk has room", self.path)
            self.full_since_ms = self.full_error = None

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """Reads under the process lock (the connection is shared between threads)."""
        try:
            with self._lock:
                yield self.conn
        except sqlite3.Error as error:
            raise _translate(error, self.path, self.busy_timeout_ms) from error

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

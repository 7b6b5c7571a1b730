"""One daemon per database, whatever socket it listens on.

The socket lock (``daemon/server.py``) only stops two daemons on one socket: started
with different ``--socket`` values, two daemons would both tick one database and every
change would be delivered twice. So a daemon also holds an exclusive ``flock`` keyed
by its database's real path for its whole life. The lock file lives in the user's own
data folder (``<data>/agentmonitors/locks``, created owner-only), never beside a
database a repository could have chosen, and dies with the process, SIGKILL included.
Beside it the holder writes which socket it serves, so a second daemon can name it.
``:memory:`` databases are private to their process and take no lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from agentmonitors.daemon.process_lock import take_process_lock
from agentmonitors.daemon.server import DaemonAlreadyRunning
from agentmonitors.fastpath.digests import sha256_hex
from agentmonitors.paths import prepare_private_dir
from agentmonitors.store.database import is_memory
from agentmonitors.workspace import data_root, write_private_file

# The holder writes its socket just after taking the lock; a second daemon that finds
# the lock taken waits this long for that line before saying it does not know it.
_HOLDER_WAIT_S = 1.0
_HOLDER_POLL_S = 0.05


class DatabaseInUse(DaemonAlreadyRunning):
    """Another daemon already serves this database (on ``socket_path``, when known)."""

    def __init__(self, db_path: str, socket_path: str | None) -> None:
        super().__init__(socket_path or "(unknown socket)")
        self.db_path = db_path
        if socket_path is None:
            message = (
                f"AgentMon daemon is already running on the database {db_path}; stop it"
                " before starting another."
            )
        else:
            message = (
                f"AgentMon daemon is already running at {socket_path} on the database"
                f" {db_path}; one daemon serves a database: use that socket, or stop it first"
                f" (`agentmonitors daemon stop --socket {socket_path}`)."
            )
        self.args = (message,)


def lock_path(db_path: str) -> str | None:
    """``<data>/agentmonitors/locks/db-<sha256(real path)[:16]>.lock``; None for memory."""
    if is_memory(db_path):
        return None
    real = os.path.realpath(os.path.abspath(db_path))
    digest = sha256_hex(os.fsencode(real))[:16]
    return os.path.join(data_root(), "agentmonitors", "locks", f"db-{digest}.lock")


def _holder_path(lock: str) -> str:
    return lock + ".holder"


def _read_holder(lock: str) -> dict[str, Any] | None:
    try:
        with open(_holder_path(lock), encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holder_socket(db_path: str) -> str | None:
    """The socket of the live daemon that last took ``db_path``'s lock, if any.

    A hint for a command deciding whether to start a daemon (confirm it with a ping):
    only :class:`DatabaseLock` decides who runs.
    """
    lock = lock_path(db_path)
    if lock is None:
        return None
    holder = _read_holder(lock)
    if holder is None or holder.get("pid") == os.getpid() or not _alive(holder.get("pid")):
        return None
    socket = holder.get("socket")
    return socket if isinstance(socket, str) and socket else None


class DatabaseLock:
    """The exclusive lock on a database, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, db_path: str, socket_path: str) -> None:
        self.db_path = db_path
        self.socket_path = socket_path
        self.path = lock_path(db_path)
        self._lock: Any = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`DatabaseInUse` naming the holder's socket."""
        if self.path is None:
            return
        prepare_private_dir(os.path.dirname(self.path))
        lock = take_process_lock(self.path)
        if lock is None:
            raise DatabaseInUse(self.db_path, self._wait_for_holder())
        self._lock = lock
        write_private_file(
            _holder_path(self.path),
            json.dumps({"pid": os.getpid(), "socket": self.socket_path, "db": self.db_path}),
        )

    def _wait_for_holder(self) -> str | None:
        assert self.path is not None
        deadline = time.monotonic() + _HOLDER_WAIT_S
        while True:
            holder = _read_holder(self.path)
            if holder is not None and _alive(holder.get("pid")):
                socket = holder.get("socket")
                return socket if isinstance(socket, str) and socket else None
            if time.monotonic() >= deadline:
                return None
            time.sleep(_HOLDER_POLL_S)

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is None or self.path is None:
            return
        # The holder line goes first, so it never outlives the lock and misnames a
        # successor's socket.
        holder = _read_holder(self.path)
        if holder is not None and holder.get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                os.unlink(_holder_path(self.path))
        with contextlib.suppress(OSError):
            lock.release()

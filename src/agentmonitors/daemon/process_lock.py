"""An exclusive lock that dies with its process: the daemon's socket lock and database lock.

Never a soft marker file (a SIGKILL would leave it behind), and not thread-local:
``release`` may run on another thread than ``acquire``. The server (``daemon/server.py``)
takes one on ``<socket>.lock``, the database lock (``daemon/db_lock.py``) one per
database; each says in its own words who holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import filelock


def take_process_lock(path: str) -> filelock.BaseFileLock | None:
    """The exclusive lock on ``path``, taken without waiting; None when another holds it."""
    # Lazy: filelock costs 20 ms, and `events list` with no daemon loads the server module.
    import filelock

    lock = filelock.FileLock(
        path, timeout=0, mode=0o600, thread_local=False, fallback_to_soft=False
    )
    try:
        lock.acquire()
    except filelock.Timeout:
        return None
    return lock

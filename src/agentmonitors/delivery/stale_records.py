"""Pruning the per-process and per-thread records in the user's data folder.

Each Claude Code SessionStart writes which session its process runs
(``delivery/host_process.py``), and each Codex SessionStart the ``CODEX_HOME`` its thread
runs under (``delivery/codex_home.py``): a small file each, in a folder every workspace
of the user shares. The daemon's retention pass (``daemon/retention.py``) removes the
stale ones, never the hook path (docs/durability.md, "Retention"):

- a process record once its process is gone and the record is older than the
  retention age (a pid reused since keeps it until that process ends too);
- a thread record once it is older than the age and so is the last activity of every
  session this workspace's store keeps for that thread: each pass first dates the
  record of a kept thread to its session's last activity, so a thread of another
  workspace is renewed by that workspace's daemon and never looks stale here while its
  sessions are young there;
- a partial write (``*.tmp``) a hook left behind, once older than the age.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping

from agentmonitors.delivery import codex_home, host_process

__all__ = ["process_alive", "prune_stale_records"]


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts: it is not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True


def _older_files(folder: str, cutoff_s: float) -> Iterable[tuple[str, str]]:
    """(name, path) of each regular file in ``folder`` last written before ``cutoff_s``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff_s:
                found.append((entry.name, entry.path))
        except OSError:
            continue
    return found


def _remove(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0  # gone already (another daemon's pass), or not ours to remove
    return 1


def prune_stale_records(
    cutoff_s: float,
    kept_threads: Mapping[str, float],
    *,
    alive: Callable[[int], bool] = process_alive,
) -> dict[str, int]:
    """Remove the stale records (see the module's note); how many of each kind went.

    ``cutoff_s`` is on the daemon's clock (seconds), ``kept_threads`` the host session
    ids its store still keeps, each with its last activity on that clock; ``alive``
    tells whether a pid still runs.
    """
    removed = {"processRecords": 0, "threadRecords": 0}
    for name, path in _older_files(host_process.records_folder(), cutoff_s):
        if name.endswith(".tmp") or (name.isdigit() and not alive(int(name))):
            removed["processRecords"] += _remove(path)
    folder = codex_home.records_folder()
    for thread_id, active_s in kept_threads.items():
        path = os.path.join(folder, codex_home.record_name(thread_id))
        try:
            if os.stat(path).st_mtime < active_s:
                os.utime(path, (active_s, active_s))
        except OSError:
            continue  # no record for it: not a Codex thread, or it recorded none
    for _name, path in _older_files(folder, cutoff_s):
        removed["threadRecords"] += _remove(path)
    return {kind: count for kind, count in removed.items() if count}

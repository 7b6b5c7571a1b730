"""Starting a daemon in the background (``daemon start`` and the SessionStart boot).

Standard library only: ``session start`` runs it on the hook path.
"""

from __future__ import annotations

import contextlib
import os
import sys

# A daemon's log is kept to about this size: at each start a larger one becomes
# ``<log>.1`` (replacing the previous one), so a long-lived project never fills a disk.
MAX_LOG_BYTES = 5 * 1024 * 1024


def spawn_daemon(args: list[str], env: dict[str, str], log_path: str) -> int:
    """Run ``python -m agentmonitors daemon run <args>`` detached; returns its pid.

    posix_spawn in a new session: the daemon outlives the caller, its output is
    appended to ``log_path`` (never to a hook's pipes, which Claude Code waits on),
    and no Popen object is left to complain that its child still runs.
    """
    from agentmonitors.paths import prepare_private_dir

    prepare_private_dir(os.path.dirname(os.path.abspath(log_path)))
    rotate_log(log_path)
    argv = [sys.executable, "-m", "agentmonitors", "daemon", "run", *args]
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return os.posix_spawn(
            sys.executable,
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, fd, 1),
                (os.POSIX_SPAWN_DUP2, fd, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(fd)


def rotate_log(log_path: str, max_bytes: int = MAX_LOG_BYTES) -> bool:
    """Move a log past ``max_bytes`` to ``<log>.1``; True when it did. Best effort."""
    try:
        if os.lstat(log_path).st_size <= max_bytes:
            return False
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.replace(log_path, log_path + ".1")
        return True
    return False

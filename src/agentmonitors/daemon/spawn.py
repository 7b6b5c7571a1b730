"""Starting a daemon in the background (``daemon start`` and the SessionStart boot).

Standard library only: ``session start`` runs it on the hook path.
"""

from __future__ import annotations

import contextlib
import os

from agentmonitors.paths import prepare_private_dir, python_command

# Imports only for annotations: ``session start`` loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# A daemon's log is kept to about this size: past it, the running daemon moves it to
# ``<log>.1`` (replacing the previous one) and starts afresh, and so does a start that
# finds it larger, so a long-lived project never fills a disk.
MAX_LOG_BYTES = 5 * 1024 * 1024
LOG_MAX_ENV = "AGENTMONITORS_LOG_MAX_BYTES"
# Below this a log could not hold one traceback; a smaller setting is raised to it.
MIN_LOG_BYTES = 16 * 1024


def log_max_bytes() -> int:
    """``$AGENTMONITORS_LOG_MAX_BYTES`` when it is a whole number, else 5 MiB."""
    raw = os.environ.get(LOG_MAX_ENV, "").strip()
    if not raw.isdigit():
        return MAX_LOG_BYTES
    return max(MIN_LOG_BYTES, int(raw))


def spawn_daemon(args: list[str], env: dict[str, str], log_path: str, cwd: str) -> int:
    """Run ``python -P -m agentmonitors daemon run <args> --log <log_path>`` detached.

    Returns its pid. posix_spawn in a new session: the daemon outlives the caller, its
    output goes to ``log_path`` (never to a hook's pipes, which Claude Code waits on),
    and no Popen object is left to complain that its child still runs. The daemon
    never imports from the project folder: ``-P`` leaves the working directory off its
    ``sys.path``, and it runs in ``cwd`` (a folder of ours, see
    :func:`agentmonitors.paths.neutral_cwd`), so ``args`` must name every path
    absolutely. Its stdout and stderr are the log from the first byte, so a crash
    before its logging is set up still lands there.
    """
    prepare_private_dir(os.path.dirname(os.path.abspath(log_path)))
    rotate_log(log_path, log_max_bytes())
    argv = python_command("-m", "agentmonitors", "daemon", "run", *args, "--log", log_path)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        with _working_directory(cwd):
            return os.posix_spawn(
                argv[0],
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


@contextlib.contextmanager
def _working_directory(path: str) -> Iterator[None]:
    """Be in ``path`` for the spawn, then back where we were.

    posix_spawn has no working-directory action and the child inherits ours; the
    callers (a hook, a CLI command) run no other thread that could notice the switch.
    The way back is a descriptor, not a name, so a renamed folder is no trap.
    """
    back: int | str | None = None
    with contextlib.suppress(OSError):
        back = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    if back is None:
        # An unreadable folder cannot be opened; a deleted one cannot be gone back to.
        with contextlib.suppress(OSError):
            back = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        if isinstance(back, int):
            try:
                os.fchdir(back)
            finally:
                os.close(back)
        elif back is not None:
            with contextlib.suppress(OSError):
                os.chdir(back)


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

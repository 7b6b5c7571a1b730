"""Where the database, the daemon socket and the daemon log live.

Every hook call resolves a socket, so this module imports only the standard library
(and ``agentmonitors.workspace``, which does the same) and defers the rest of its
imports to the rare over-long-path branch.
"""

from __future__ import annotations

import os
import stat
import sys

from agentmonitors.workspace import data_root, read_local_state, workspace_data_dir

# Imports only for annotations: every hook call loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

DB_ENV = "AGENTMONITORS_DB"
SOCKET_ENV = "AGENTMONITORS_SOCKET"
DB_FILENAME = "inbox.db"
SOCKET_FILENAME = "agentmonitors.sock"
LOG_FILENAME = "daemon.log"
MEMORY_DB = ":memory:"

# AF_UNIX paths are capped at 108 bytes on Linux and 104 on the BSDs; 100 leaves room
# and is the reference's threshold, so both pick the same substitute for a given path.
MAX_SOCKET_PATH_LENGTH = 100
# `/tmp`, not `tempfile.gettempdir()`: on macOS `$TMPDIR` is itself ~50 characters
# deep and would push the substitute back over the limit. Tests repoint this.
SOCKET_FALLBACK_BASE = "/tmp"
_PRIVATE_DIR_MODE = 0o700
# A pre-upgrade reference daemon may still answer at the old shared-/tmp substitute.
_LEGACY_PROBE_TIMEOUT_S = 0.4


class SocketPathError(OSError):
    """The private directory for an over-long socket path is unsafe to use."""


def _env(name: str) -> str | None:
    # An empty variable means "unset": `AGENTMONITORS_DB= cmd` is how people clear it.
    value = os.environ.get(name)
    return value or None


def _global_default_db() -> str:
    # HOME, not XDG: the reference keeps the global inbox there and users have data in it.
    return os.path.join(os.path.expanduser("~"), ".local", "share", "agentmonitors", DB_FILENAME)


def global_db_path() -> str:
    """``$AGENTMONITORS_DB``, else ``~/.local/share/agentmonitors/inbox.db``."""
    return _env(DB_ENV) or _global_default_db()


def resolve_db_path(workspace: str | None) -> str:
    """The database a command in ``workspace`` opens.

    ``$AGENTMONITORS_DB`` beats everything; an enabled workspace then uses its
    persisted ``db:`` or its derived ``<workspace data dir>/inbox.db``; anything else
    falls back to the global default. Values, ``:memory:`` included, pass verbatim.
    """
    override = _env(DB_ENV)
    if override is not None:
        return override
    if workspace is not None:
        state = read_local_state(workspace)
        if state.enabled:
            return state.db or os.path.join(workspace_data_dir(workspace), DB_FILENAME)
    return _global_default_db()


def workspace_log_path(workspace: str) -> str:
    """``<workspace data dir>/daemon.log``, where a detached daemon writes."""
    return os.path.join(workspace_data_dir(workspace), LOG_FILENAME)


def python_command(*args: str) -> list[str]:
    """This interpreter running ``args`` with nothing of the working directory on its path.

    ``-P`` keeps the interpreter from putting the current directory (for ``-m``) or a
    script's folder first on ``sys.path``, so a project's own ``filelock.py`` cannot
    stand in for a module we import. Not ``-I``: it would also drop the user
    site-packages, where ``pip install --user`` puts agentmonitors, and the ``PYTHON*``
    variables a user's setup may need (docs/architecture.md, "Processes we start").
    """
    return [sys.executable, "-P", *args]


def neutral_cwd(workspace: str | None = None) -> str:
    """A working directory for a process we start: never the project folder.

    The workspace's data folder (where its log and database live), else our data
    folder; created owner-only. The child gets its workspace as an argument, never
    from its working directory.
    """
    if workspace is not None:
        path = workspace_data_dir(workspace)
    else:
        path = os.path.join(data_root(), "agentmonitors")
    prepare_private_dir(path)
    return path


def _global_socket_path() -> str:
    db = global_db_path()
    if db == MEMORY_DB:
        # An in-memory database has no directory; use the XDG-aware data root so
        # tests that relocate XDG_DATA_HOME stay isolated.
        return os.path.join(data_root(), "agentmonitors", SOCKET_FILENAME)
    return os.path.join(os.path.dirname(db), SOCKET_FILENAME)


def resolve_socket_path(
    workspace: str | None,
    explicit: str | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> str:
    """The daemon socket for a manual command.

    ``--socket`` > ``$AGENTMONITORS_SOCKET`` > an enabled workspace's persisted
    ``socket:`` or derived ``<workspace data dir>/agentmonitors.sock`` > the socket
    beside the global database; then shortened by :func:`fit_socket_path`. Only a
    typed ``--socket`` earns the substitution warning.
    """
    if explicit:
        return fit_socket_path(explicit, explicit=True, warn=warn)
    candidate = _env(SOCKET_ENV)
    if candidate is None and workspace is not None:
        state = read_local_state(workspace)
        if state.enabled:
            candidate = state.socket or os.path.join(workspace_data_dir(workspace), SOCKET_FILENAME)
    if candidate is None:
        candidate = _global_socket_path()
    return fit_socket_path(candidate, warn=warn)


def _stderr_warning(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def fit_socket_path(
    path: str,
    *,
    explicit: bool = False,
    warn: Callable[[str], None] | None = None,
) -> str:
    """``path`` itself, or a short private substitute when it is too long to bind.

    The substitute is ``/tmp/agentmonitors-<uid>/agentmonitors-<16 hex>.sock``: the
    hash keeps it stable (every client computes the same one), the per-uid 0700
    directory keeps other local users from reaching an unauthenticated daemon.
    """
    encoded = os.fsencode(path)
    # The kernel limit is in bytes; for ASCII paths this equals the character count.
    if len(encoded) <= MAX_SOCKET_PATH_LENGTH:
        return path
    from agentmonitors.digests import sha256_hex

    digest = sha256_hex(encoded)[:16]
    name = f"agentmonitors-{digest}.sock"
    legacy = os.path.join(SOCKET_FALLBACK_BASE, name)
    if _legacy_daemon_answers(legacy):
        # Split-brain guard: a daemon started by an older build still listens at the
        # old shared-/tmp location; talking to it beats booting a second daemon on
        # the same database. One restart of that daemon completes the move.
        substitute = legacy
    else:
        directory = os.path.join(SOCKET_FALLBACK_BASE, f"agentmonitors-{os.getuid()}")
        ensure_private_dir(directory)
        substitute = os.path.join(directory, name)
    if explicit:
        unit = "characters" if len(encoded) == len(path) else "bytes"
        (warn or _stderr_warning)(
            f'Warning: --socket path "{path}" is {len(encoded)} {unit}, over the '
            f"{MAX_SOCKET_PATH_LENGTH}-character limit for Unix sockets; "
            f"using {substitute} instead."
        )
    return substitute


def _legacy_daemon_answers(path: str) -> bool:
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return False
    except OSError:
        return False  # the usual case: one failed lstat, no socket work at all
    import socket

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(_LEGACY_PROBE_TIMEOUT_S)
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def ensure_private_dir(path: str) -> None:
    """Create ``path`` 0700, or accept it only if it is safe to put a socket in.

    Safe means a real directory (not a symlink) owned by this uid. Group or other
    permission bits on such a directory are removed rather than refused: we own it,
    so tightening it is ours to do. Raises :class:`SocketPathError` otherwise.
    """
    try:
        os.mkdir(path, _PRIVATE_DIR_MODE)
    except FileExistsError:
        pass
    except OSError as error:
        raise SocketPathError(
            f"Cannot create the private socket directory {path}: {error.strerror or error}"
        ) from error
    # Open without following a symlink and check the opened directory itself, so a
    # swap between the check and the chmod cannot redirect us.
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if os.path.islink(path):
            raise SocketPathError(
                f"Refusing socket directory {path}: it is a symlink, not a directory "
                "(another user may have planted it); remove it and retry."
            ) from error
        raise SocketPathError(
            f"Refusing socket directory {path}: {error.strerror or error}"
        ) from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode):
            raise SocketPathError(f"Refusing socket directory {path}: it is not a directory.")
        if info.st_uid != os.getuid():
            raise SocketPathError(
                f"Refusing socket directory {path}: it is owned by uid {info.st_uid}, "
                f"not by you (uid {os.getuid()}); remove it and retry."
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, _PRIVATE_DIR_MODE)
    except OSError as error:
        if isinstance(error, SocketPathError):
            raise
        raise SocketPathError(
            f"Cannot secure the socket directory {path}: {error.strerror or error}"
        ) from error
    finally:
        os.close(fd)


def _agentmonitors_roots() -> tuple[str, ...]:
    from agentmonitors.workspace import data_root

    home_share = os.path.join(os.path.expanduser("~"), ".local", "share")
    return tuple(
        os.path.join(os.path.realpath(root), "agentmonitors") for root in (data_root(), home_share)
    )


def is_agentmonitors_dir(path: str) -> bool:
    """Whether ``path`` is (inside) a data folder this tool owns, so tightening it is ours."""
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in _agentmonitors_roots())


def prepare_private_dir(path: str) -> None:
    """Create ``path`` (and parents) owner-only; tighten it when it is one of our folders.

    A folder the user pointed us at (``--socket /tmp/x.sock``, ``AGENTMONITORS_DB``)
    is created private when missing but never re-moded when it already exists: it may
    be shared, like ``/tmp``. Ours is checked without following a symlink.
    """
    old = os.umask(0o077)
    try:
        os.makedirs(path, mode=_PRIVATE_DIR_MODE, exist_ok=True)
    finally:
        os.umask(old)
    if not is_agentmonitors_dir(path):
        return
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return
    if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.getuid():
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, _PRIVATE_DIR_MODE)
        finally:
            os.close(fd)


def session_marker(host_session_id: str) -> str:
    """The folder, relative to a project root, that exists once this session registered there.

    Registration writes the session's hook-state file under it (see
    :func:`default_hook_state_path`), so its presence is a cheap "this session belongs
    here" signal that needs no daemon round trip.
    """
    return os.path.join(".agentmonitors", "sessions", encode_host_session_id(host_session_id))


def encode_host_session_id(host_session_id: str) -> str:
    """A path segment for a host session id: unsafe code points become ``~<hex>``.

    Each code point outside ``[A-Za-z0-9_-]`` is written as ``~`` plus its lowercase
    hex, at least two digits (``.`` is ``~2e``); an empty id is ``_empty``.
    """
    if not host_session_id:
        return "_empty"
    return "".join(
        char if char.isascii() and (char.isalnum() or char in "_-") else f"~{ord(char):02x}"
        for char in host_session_id
    )


def default_hook_state_path(host_session_id: str, workspace_path: str | None = None) -> str:
    """``<workspace or cwd>/.agentmonitors/sessions/<enc>/hook-state.json``."""
    return os.path.join(
        workspace_path or os.getcwd(),
        ".agentmonitors",
        "sessions",
        encode_host_session_id(host_session_id),
        "hook-state.json",
    )

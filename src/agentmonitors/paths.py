"""Where the database, the daemon socket and the daemon log live.

Every hook call resolves a socket, so this module imports only the standard library
(and ``agentmonitors.workspace``, which does the same) and defers the rest of its
imports to the rare over-long-path branch.
"""

from __future__ import annotations

import os
import stat
import sys

from agentmonitors.workspace import (
    data_root,
    enable_file_path,
    read_local_state,
    workspace_data_dir,
)

# Imports only for annotations: every hook call loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmonitors.workspace import LocalState

DB_ENV = "AGENTMONITORS_DB"
SOCKET_ENV = "AGENTMONITORS_SOCKET"
DB_FILENAME = "inbox.db"
SOCKET_FILENAME = "agentmonitors.sock"
LOG_FILENAME = "daemon.log"
MEMORY_DB = ":memory:"

# AF_UNIX paths are capped at 108 bytes on Linux and 104 on the BSDs; 100 leaves room
# and picks the substitute the other tool picks (docs/compatibility.md, "Stored state").
MAX_SOCKET_PATH_LENGTH = 100
# `/tmp`, not `tempfile.gettempdir()`: on macOS `$TMPDIR` is itself ~50 characters
# deep and would push the substitute back over the limit. Tests repoint this.
SOCKET_FALLBACK_BASE = "/tmp"
_PRIVATE_DIR_MODE = 0o700


class SocketPathError(OSError):
    """The private directory for an over-long socket path is unsafe to use."""


def _env(name: str) -> str | None:
    # An empty variable means "unset": `AGENTMONITORS_DB= cmd` is how people clear it.
    value = os.environ.get(name)
    return value or None


def _global_default_db() -> str:
    # HOME, not XDG: users have data there (docs/compatibility.md, "Stored state").
    return os.path.join(os.path.expanduser("~"), ".local", "share", "agentmonitors", DB_FILENAME)


def global_db_path() -> str:
    """``$AGENTMONITORS_DB``, else ``~/.local/share/agentmonitors/inbox.db``."""
    return _env(DB_ENV) or _global_default_db()


def resolve_db_path(workspace: str | None, *, notice: Callable[[str], None] | None = None) -> str:
    """The database a command in ``workspace`` opens.

    ``$AGENTMONITORS_DB`` beats everything (verbatim, ``:memory:`` included); an
    enabled workspace then uses its persisted ``db:`` when :func:`workspace_db` honours
    it, else its derived ``<workspace data dir>/inbox.db``; anything else falls back to
    the global default. An ignored ``db:`` is said once on stderr, or to ``notice``.
    """
    override = _env(DB_ENV)
    if override is not None:
        return override
    if workspace is not None:
        state = read_local_state(workspace)
        if state.enabled:
            return workspace_db(workspace, state, notice=notice or notice_once)
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
    notice: Callable[[str], None] | None = None,
) -> str:
    """The daemon socket for a manual command.

    ``--socket`` > ``$AGENTMONITORS_SOCKET`` > an enabled workspace's persisted
    ``socket:`` when :func:`workspace_socket` honours it, else its derived
    ``<workspace data dir>/agentmonitors.sock`` > the socket beside the global
    database; then shortened by :func:`fit_socket_path`. Only a typed ``--socket``
    earns the substitution warning; an ignored ``socket:`` is said once on stderr, or
    to ``notice``.
    """
    if explicit:
        return fit_socket_path(explicit, explicit=True, warn=warn)
    candidate = _env(SOCKET_ENV)
    if candidate is None and workspace is not None:
        state = read_local_state(workspace)
        if state.enabled:
            candidate = workspace_socket(workspace, state, notice=notice or notice_once)
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
    # Lazy: only an over-long path needs a digest, and every hook call loads this module.
    from agentmonitors.fastpath.digests import sha256_hex

    digest = sha256_hex(encoded)[:16]
    name = f"agentmonitors-{digest}.sock"
    # Never the shared ``/tmp/agentmonitors-<hash>.sock`` older builds used: any local
    # user can create a name there, so a listener at it proves nothing about who runs it.
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


# --------------------------------------------------------------------------- trusted places
# The enable file may come with a cloned repository, and a socket path may name a
# listener another user put there: the database and the socket in use are only ever
# ones this user's agentmonitors created (docs/architecture.md, "Where trusted state lives").


def folder_problem(folder: str) -> str | None:
    """Why what lies in ``folder`` may have been put there by someone else, or None.

    Only the owner can add, rename or remove names in a folder owned by this uid and
    not writable by group or others, so a socket or database found there is one this
    user made. A folder that does not exist is no problem here: nothing is in it.
    """
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"its folder {folder} cannot be checked ({error.strerror or error})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    uid = os.getuid()
    if info.st_uid != uid:
        return f"its folder {folder} is owned by uid {info.st_uid}, not by you (uid {uid})"
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        return f"its folder {folder} is writable by other users (mode {mode:o})"
    return None


def socket_problem(path: str) -> str | None:
    """Why a client must not connect to ``path``, or None.

    A socket counts as ours when it is a socket (not a symlink) owned by this uid in
    a folder :func:`folder_problem` accepts, so nobody else can swap it between this
    check and the connect. Nothing at ``path`` is no problem: the connect fails alone.
    """
    problem = folder_problem(os.path.dirname(os.path.abspath(path)))
    if problem is not None:
        return problem
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link, not a socket"
    if not stat.S_ISSOCK(info.st_mode):
        return "it is not a socket"
    uid = os.getuid()
    if info.st_uid != uid:
        return f"it is owned by uid {info.st_uid}, not by you (uid {uid})"
    return None


def _our_roots(for_socket: bool) -> tuple[str, ...]:
    roots = [
        os.path.join(data_root(), "agentmonitors"),
        os.path.join(os.path.expanduser("~"), ".local", "share", "agentmonitors"),
    ]
    if for_socket:
        roots.append(os.path.join(SOCKET_FALLBACK_BASE, f"agentmonitors-{os.getuid()}"))
    return tuple(os.path.normpath(os.path.abspath(root)) for root in roots)


def enable_value_problem(value: str, *, for_socket: bool) -> str | None:
    """Why an enable file's ``socket:`` (``for_socket``) or ``db:`` is not honoured.

    Honoured: an absolute, normalized path inside agentmonitors' own data folders (or,
    for a socket, the private over-long-path folder), whose folder and existing file
    pass the owner and mode checks. ``:memory:`` and everything else are refused: the
    user's own choices go in ``$AGENTMONITORS_DB``/``$AGENTMONITORS_SOCKET`` or flags.
    """
    if not os.path.isabs(value) or os.path.normpath(value) != value:
        return "not an absolute, normalized path"
    if not any(value.startswith(root + os.sep) for root in _our_roots(for_socket)):
        return "not in agentmonitors' own data folders"
    if for_socket:
        return socket_problem(value)
    problem = folder_problem(os.path.dirname(value))
    if problem is not None:
        return problem
    try:
        info = os.lstat(value)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    uid = os.getuid()
    if info.st_uid != uid:
        return f"it is owned by uid {info.st_uid}, not by you (uid {uid})"
    return None


def _honoured(
    workspace: str,
    key: str,
    value: str | None,
    derived: str,
    notice: Callable[[str], None] | None,
) -> str:
    # The derived path is what an ignored value falls back to anyway: no check, so the
    # usual enable file (written by session start) costs no system call.
    if value is None or value == derived:
        return derived
    problem = enable_value_problem(value, for_socket=key == "socket")
    if problem is None:
        return value
    if notice is not None:
        notice(
            f"AgentMon: ignoring `{key}: {value}` in {enable_file_path(workspace)} "
            f"({problem}); using {derived}."
        )
    return derived


def workspace_socket(
    workspace: str, state: LocalState, *, notice: Callable[[str], None] | None = None
) -> str:
    """An enabled workspace's daemon socket, before :func:`fit_socket_path`: its
    ``socket:`` when honoured, else ``<workspace data dir>/agentmonitors.sock``."""
    derived = os.path.join(workspace_data_dir(workspace), SOCKET_FILENAME)
    return _honoured(workspace, "socket", state.socket, derived, notice)


def workspace_db(
    workspace: str, state: LocalState, *, notice: Callable[[str], None] | None = None
) -> str:
    """An enabled workspace's database: its ``db:`` when honoured, else
    ``<workspace data dir>/inbox.db``."""
    derived = os.path.join(workspace_data_dir(workspace), DB_FILENAME)
    return _honoured(workspace, "db", state.db, derived, notice)


def ignored_enable_values(workspace: str, state: LocalState) -> list[str]:
    """One line per enable-file ``socket:``/``db:`` value that is not honoured."""
    found: list[str] = []

    def keep(line: str) -> None:
        found.append(line.removeprefix("AgentMon: "))

    workspace_socket(workspace, state, notice=keep)
    workspace_db(workspace, state, notice=keep)
    return found


_NOTICED: set[str] = set()


def notice_once(line: str) -> None:
    """Write ``line`` to stderr, once per process (a command may resolve a path twice)."""
    if line in _NOTICED:
        return
    _NOTICED.add(line)
    _stderr_warning(line)

"""Workspace root discovery and the per-project enable file.

Every hook call starts here, so this module imports only the standard library and
does as little filesystem work as it can: a handful of ``stat`` calls to find the
root, one small read for the enable file.
"""

from __future__ import annotations

import os
import stat

from agentmonitors.fastpath.scalar_frontmatter import TRUE_SPELLINGS, parse_scalar_frontmatter

# Imports only for annotations: the hook path loads this module on every prompt.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENABLE_FILE_RELPATH = os.path.join(".claude", "agentmonitors.local.md")
PROJECT_MONITORS_RELPATH = os.path.join(".claude", "monitors")
# A workspace daemon's defaults, defined once: its flags, its options and the
# enable file (which session start boots the daemon from) all read these.
DEFAULT_REAP_AFTER_MS = 300_000
"""Stop after this long with no active session (0 = never)."""
DEFAULT_POLL_MS = 30_000
"""Milliseconds between ticks (file changes wake the daemon sooner)."""
PRIVATE_FILE_MODE = 0o600

# Every claim here is tested: deleting the file disables the project, `init --enable-only`
# recreates it, and the next session start writes the socket and db lines back.
ENABLE_FILE_NOTE = (
    "> Local AgentMon coordination state (gitignored). Safe to delete: monitoring is then "
    "off for this project until `agentmonitors init --enable-only` turns it back on, and "
    "the next Claude Code session start writes the daemon's socket and db lines again.\n"
    ">\n"
    "> Add `live: off` between the `---` lines to turn live updates off: nothing wakes an "
    "idle session (Claude Code's plugin follower and headless wake, Codex's queued turn) "
    "and session start offers no `agentmonitors events follow`; the hooks still deliver at "
    "each prompt. `live: on`, the default, keeps them on. Add `wake: high` to let only "
    "high-urgency changes wake an idle session (`wake: all`, the default, wakes it for "
    "every change; the hooks still deliver the rest)."
)


def logical_cwd(env: Mapping[str, str] | None = None) -> str:
    """The current directory as the user's shell names it.

    ``os.getcwd()`` resolves symlinks; the shell's ``PWD`` keeps the path the user
    typed. Workspaces are matched lexically, so the logical name is the one to use,
    but only while ``PWD`` still points at the same directory.
    """
    environ = os.environ if env is None else env
    physical = os.getcwd()
    pwd = environ.get("PWD")
    if pwd and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, physical):
                return os.path.normpath(pwd)
        except OSError:
            pass
    return physical


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _home() -> str | None:
    try:
        return os.path.normpath(os.path.expanduser("~"))
    except (KeyError, RuntimeError):
        return None


def _is_repository(folder: str) -> bool:
    dot_git = os.path.join(folder, ".git")
    return _is_file(dot_git) or _is_file(os.path.join(dot_git, "HEAD"))


def find_workspace_root(start: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Walk up from ``start`` (default: the current directory) to the project root.

    The nearest ancestor holding the enable file or a ``.claude/monitors`` folder wins;
    failing that, the nearest git repository (a ``.git`` file, as worktrees and
    submodules have, or a ``.git`` folder holding ``HEAD``: an empty one, such as a
    sandbox's placeholder, is no repository); failing that, ``start`` itself. The home
    directory never counts as a project through ``.claude/monitors``, because there that
    folder is the user scope, not a project.
    """
    origin = os.path.abspath(start) if start is not None else logical_cwd(env)
    home = _home()
    git_root: str | None = None
    current = origin
    while True:
        if _is_file(os.path.join(current, ENABLE_FILE_RELPATH)):
            return current
        if current != home and _is_dir(os.path.join(current, PROJECT_MONITORS_RELPATH)):
            return current
        if git_root is None and _is_repository(current):
            git_root = current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return git_root if git_root is not None else origin


def find_enabled_project(
    start: str, registered_marker: str | None = None
) -> tuple[str | None, LocalState | None, str | None, LocalState | None]:
    """Walk up from ``start`` looking for enabled projects.

    Returns ``(registered_root, its_state, nearest_root, its_state)``: the nearest
    enabled ancestor holding ``registered_marker`` (a path relative to a project root,
    such as a session's hook-state folder), and the nearest enabled ancestor at all.
    Either may be None. Paths stay lexical (``abspath``, never ``realpath``) because the
    daemon matches workspaces by exact string. The walk stops at the first registered
    hit; without a marker it stops at the nearest enabled one. Each level costs one
    failed ``open`` until an enable file turns up.
    """
    current = os.path.abspath(start)
    nearest: str | None = None
    nearest_state: LocalState | None = None
    while True:
        state = read_local_state(current)
        if state.enabled:
            if registered_marker is None:
                return None, None, current, state
            if _is_dir(os.path.join(current, registered_marker)):
                return current, state, nearest or current, nearest_state or state
            if nearest is None:
                nearest, nearest_state = current, state
        parent = os.path.dirname(current)
        if parent == current:
            return None, None, nearest, nearest_state
        current = parent


def resolve_enabled_project(
    cwd: str | None,
    registered_marker: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[str, LocalState]:
    """The enabled project a hook (or the channel) acts on, and its enable-file state.

    Claude Code's payload ``cwd`` follows the agent's ``cd``, so the project is found by
    walking up from it; when it lies outside every enabled project, from
    ``$CLAUDE_PROJECT_DIR``. A session keeps its project: with nested enabled projects,
    an ancestor where this session is already registered (``registered_marker`` exists
    there) wins over a nearer enabled one, from either starting point, so a session
    opened at an outer root keeps being served there after the agent enters an inner
    project. Otherwise the nearest enabled ancestor wins (that is where a new session
    registers). When nothing is enabled, the starting folder comes back with a
    disabled state, for messages.
    """
    environ = os.environ if env is None else env
    origin = cwd or environ.get("CLAUDE_PROJECT_DIR") or logical_cwd(environ)
    registered, registered_state, nearest, nearest_state = find_enabled_project(
        origin, registered_marker
    )
    if registered is not None and registered_state is not None:
        return registered, registered_state
    project_dir = environ.get("CLAUDE_PROJECT_DIR")
    if project_dir and os.path.abspath(project_dir) != os.path.abspath(origin):
        fallback, fallback_state, fallback_nearest, fallback_nearest_state = find_enabled_project(
            project_dir, registered_marker
        )
        if fallback is not None and fallback_state is not None:
            return fallback, fallback_state
        if nearest is None:
            nearest, nearest_state = fallback_nearest, fallback_nearest_state
    if nearest is not None and nearest_state is not None:
        return nearest, nearest_state
    return os.path.abspath(origin), LocalState()


def resolve_workspace(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The workspace a command acts on: ``--workspace``, ``CLAUDE_PROJECT_DIR``, or the
    root found by walking up from the current directory. Absolute, never symlink-resolved.
    """
    environ = os.environ if env is None else env
    if explicit:
        return os.path.abspath(explicit)
    project_dir = environ.get("CLAUDE_PROJECT_DIR")
    if project_dir:
        return os.path.abspath(project_dir)
    return find_workspace_root(env=environ)


def user_monitors_dir() -> str | None:
    """``~/.claude/monitors``, the user scope, or None when there is no home."""
    home = _home()
    return None if home is None else os.path.join(home, PROJECT_MONITORS_RELPATH)


# --------------------------------------------------------------------------- enable file


class LocalState:
    """The per-project coordination file's keys.

    A plain class rather than a NamedTuple: importing ``typing`` would cost every
    hook a few milliseconds.
    """

    __slots__ = (
        "db",
        "enabled",
        "last_boot_failure_at",
        "live",
        "reap_after_ms",
        "retention",
        "socket",
        "wake",
    )

    def __init__(
        self,
        enabled: bool = False,
        socket: str | None = None,
        db: str | None = None,
        reap_after_ms: int = DEFAULT_REAP_AFTER_MS,
        last_boot_failure_at: str | None = None,
        live: str | None = None,
        wake: str | None = None,
        retention: str | None = None,
    ) -> None:
        self.enabled = enabled
        self.socket = socket
        self.db = db
        self.reap_after_ms = reap_after_ms
        self.last_boot_failure_at = last_boot_failure_at
        self.live = live
        """The ``live:`` value as the user wrote it (None when absent); see :func:`live_setting`."""
        self.wake = wake
        """The ``wake:`` value as the user wrote it (None when absent); see :func:`wake_setting`."""
        self.retention = retention
        """The ``retention:`` value as written (None when absent); see ``store/retention.py``."""

    def _fields(
        self,
    ) -> tuple[bool, str | None, str | None, int, str | None, str | None, str | None, str | None]:
        return (
            self.enabled,
            self.socket,
            self.db,
            self.reap_after_ms,
            self.last_boot_failure_at,
            self.live,
            self.wake,
            self.retention,
        )

    def _replace(self, **changes: object) -> LocalState:
        """A copy with some keys changed (the NamedTuple-style spelling callers use)."""
        values: dict[str, object] = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"unknown LocalState keys: {sorted(unknown)}")
        values.update(changes)
        return LocalState(**values)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalState) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"LocalState(enabled={self.enabled!r}, socket={self.socket!r}, db={self.db!r}, "
            f"reap_after_ms={self.reap_after_ms!r}, "
            f"last_boot_failure_at={self.last_boot_failure_at!r}, live={self.live!r}, "
            f"wake={self.wake!r}, retention={self.retention!r})"
        )


def enable_file_path(workspace: str) -> str:
    return os.path.join(workspace, ENABLE_FILE_RELPATH)


def read_local_state(workspace: str) -> LocalState:
    """Read the enable file. Missing, unreadable or malformed means not enabled.

    ``true``, ``True`` or ``TRUE`` (bare or quoted) enables; ``yes``, ``on`` and ``1``
    do not.
    """
    # Lazy: what imports this for its path helpers alone (the daemon client) skips untrusted.
    from agentmonitors.untrusted import ENABLE_FILE_CAP, read_bounded

    try:
        # A repository may commit a FIFO, a device or a huge file here: only a regular
        # file of at most ENABLE_FILE_CAP bytes is read (docs/architecture.md, "Text and
        # sizes"); anything else reads as not enabled.
        raw = read_bounded(enable_file_path(workspace), ENABLE_FILE_CAP)
    except OSError:
        return LocalState()
    text = raw.decode("utf-8", errors="replace")
    data = parse_scalar_frontmatter(text)
    if data is None:
        return LocalState()
    enabled = data.get("enabled")
    reap = data.get("reap-after-ms")
    socket = data.get("socket")
    db = data.get("db")
    failure = data.get("last-boot-failure-at")
    return LocalState(
        enabled=enabled is True or enabled in TRUE_SPELLINGS,
        socket=socket if isinstance(socket, str) and socket else None,
        db=db if isinstance(db, str) and db else None,
        reap_after_ms=reap if isinstance(reap, int) and reap >= 0 else DEFAULT_REAP_AFTER_MS,
        last_boot_failure_at=failure if isinstance(failure, str) and failure else None,
        live=_as_written(data.get("live")),
        wake=_as_written(data.get("wake")),
        retention=_as_written(data.get("retention")),
    )


def _as_written(value: object) -> str | None:
    """A scalar back as text, so rewriting the file keeps it (an unknown value included:
    it is reported, never silently dropped); empty means absent."""
    if value is None or value == "":
        return None
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


LIVE_ON = frozenset(("on", "true", "yes"))
LIVE_OFF = frozenset(("off", "false", "no"))


def live_setting(value: str | None) -> bool | None:
    """Whether session start offers live updates: ``live:`` absent or on means yes.

    ``on``/``off``, ``true``/``false`` and ``yes``/``no`` in any case; None for anything
    else, which the caller reports (naming the file and the key) and treats as the default.
    """
    if value is None:
        return True
    word = value.strip().lower()
    if word in LIVE_ON:
        return True
    if word in LIVE_OFF:
        return False
    return None


WAKE_ALL = frozenset(("low", "normal", "high"))
WAKE_CHOICES = {"all": WAKE_ALL, "high": frozenset(("high",))}
"""``wake:`` values: which urgencies a live line names, so which changes wake an idle
session; the hooks deliver every urgency at their own points whatever this says."""


def wake_setting(value: str | None) -> frozenset[str] | None:
    """The urgencies that wake an idle session: ``wake:`` absent or ``all`` means every
    urgency, ``high`` only high (any case); None for anything else, which the caller
    reports (naming the file and the key) and treats as the default."""
    if value is None:
        return WAKE_ALL
    return WAKE_CHOICES.get(value.strip().lower())


def render_local_state(state: LocalState) -> str:
    lines = ["---", f"enabled: {'true' if state.enabled else 'false'}"]
    if state.socket:
        lines.append(f"socket: {state.socket}")
    if state.db:
        lines.append(f"db: {state.db}")
    lines.append(f"reap-after-ms: {state.reap_after_ms}")
    if state.last_boot_failure_at:
        lines.append(f"last-boot-failure-at: {state.last_boot_failure_at}")
    if state.live is not None:
        lines.append(f"live: {state.live}")
    if state.wake is not None:
        lines.append(f"wake: {state.wake}")
    if state.retention is not None:
        lines.append(f"retention: {state.retention}")
    lines += ["---", "", ENABLE_FILE_NOTE, ""]
    return "\n".join(lines)


def write_private_file(path: str, content: str) -> None:
    """Write ``content`` to ``path`` owner-only, atomically.

    A temp file in the same directory is renamed over the target, so a crash leaves
    either the old file or the new one, never a truncated one.
    """
    # Lazy: tempfile costs every hook an import; only a write (a session start) needs it.
    import tempfile

    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, temp_path = tempfile.mkstemp(
        dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_path, PRIVATE_FILE_MODE)
        os.replace(temp_path, path)
    except BaseException:
        _remove_quietly(temp_path)
        raise


def _remove_quietly(path: str) -> bool:
    """Remove ``path``; False when it could not be (contextlib would cost a hook an import)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def write_local_state(workspace: str, state: LocalState) -> None:
    write_private_file(enable_file_path(workspace), render_local_state(state))


def minimal_enable_file() -> str:
    """What ``init`` writes into a project that has no enable file yet."""
    return "\n".join(["---", "enabled: true", "---", "", ENABLE_FILE_NOTE, ""])


def enable_workspace(workspace: str) -> str:
    """Turn monitoring on for ``workspace``.

    Returns ``"already-enabled"`` (file untouched), ``"created"`` or ``"updated"`` (an
    existing disabled file rewritten with its other keys kept).
    """
    path = enable_file_path(workspace)
    # Lazy: this module stays standard-library-only at import (tests/test_imports.py).
    from agentmonitors.untrusted import ENABLE_FILE_CAP, RefusedFile, read_bounded

    raw: bytes | None
    try:
        raw = read_bounded(path, ENABLE_FILE_CAP)
    except FileNotFoundError:
        raw = None
    except RefusedFile:
        raw = b""  # not a file we read: replaced below by one we wrote
    current = read_local_state(workspace)
    if current.enabled:
        return "already-enabled"
    if raw is None:
        write_private_file(path, minimal_enable_file())
        return "created"
    kept = LocalState(
        enabled=True,
        socket=current.socket,
        db=current.db,
        reap_after_ms=current.reap_after_ms,
        live=current.live,
        wake=current.wake,
        retention=current.retention,
    )
    write_private_file(path, render_local_state(kept))
    return "updated"


# --------------------------------------------------------------------------- data paths


def data_root(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_DATA_HOME`` or ``~/.local/share``."""
    environ = os.environ if env is None else env
    xdg = environ.get("XDG_DATA_HOME")
    if xdg:
        return xdg
    return os.path.join(os.path.expanduser("~"), ".local", "share")


def workspace_hash(workspace: str) -> str:
    # Lazy: a hook in a folder that is not enabled never hashes a workspace path.
    from agentmonitors.fastpath.digests import sha256_hex

    return sha256_hex(os.path.abspath(workspace).encode("utf-8"))[:16]


def workspace_data_dir(workspace: str, env: Mapping[str, str] | None = None) -> str:
    """``<data>/agentmonitors/workspaces/<sha256(workspace)[:16]>``."""
    return os.path.join(data_root(env), "agentmonitors", "workspaces", workspace_hash(workspace))

"""Glob expansion and matching for file-fingerprint, in the dialect of docs/compatibility.md.

Patterns support ``*``, ``**``, ``?``, ``[..]`` and ``{a,b}`` (braces are expanded
first, so an alternative may span folders). Dotfiles and dot-folders match only when a
pattern segment names them (starts with ``.``); ``**`` never enters a dot-folder and
never crawls a symlinked folder, though a symlinked folder's direct contents can match
the segments after the ``**``.

Expansion walks the tree with ``os.scandir`` from each pattern's literal prefix, one
segment at a time, so only folders a pattern can reach are listed, each folder is listed
once per call however many patterns reach it, and dot-folders are pruned unless named.
Segments are compiled once to regular expressions, and braces expanded, by
``fastpath/globs.py`` (without wcmatch and bracex when it can: docs/architecture.md,
"Speed").
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence

from agentmonitors.fastpath.globs import (
    GLOBSTAR,
    LITERAL,
    Segment,
    brace_alternatives,
    compile_segment,
    is_magic,
)
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.untrusted import escape_undecodable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    # What a walk keeps of each file's stat.
    _Kept = TypeVar("_Kept")

_MISSING = (errno.ENOENT, errno.ENOTDIR)


def resolve_base(cwd: str | None, workspace_path: str | None) -> str:
    """The folder relative globs resolve against (the config's ``cwd``)."""
    if cwd is not None and os.path.isabs(cwd):
        return os.path.normpath(cwd)
    root = workspace_path if workspace_path else os.getcwd()
    base = os.path.join(root, cwd) if cwd else root
    return os.path.normpath(os.path.abspath(base))


@dataclass(frozen=True)
class GlobPattern:
    """One brace alternative of an authored pattern, anchored at an absolute folder.

    ``root`` is the absolute literal prefix (for a pattern without wildcards, the path
    itself) and ``segments`` the rest, compiled.
    """

    source: str
    root: str
    segments: tuple[Segment, ...]
    # Whether produced paths may hold "." or ".." components and need normalising.
    needs_normalising: bool

    @property
    def is_literal(self) -> bool:
        return not self.segments

    @property
    def watch_root(self) -> str:
        """The folder whose subtree holds every path this pattern can match."""
        return os.path.dirname(self.root) if self.is_literal else self.root

    def matches(self, path: str) -> bool:
        """Whether the normalised absolute ``path`` is matched, as a string (no I/O)."""
        if self.is_literal:
            return path == self.root
        prefix = self.root if self.root.endswith("/") else self.root + "/"
        if not path.startswith(prefix):
            return False
        return _match_names(path[len(prefix) :].split("/"), self.segments, 0, 0)


def _match_names(names: list[str], segments: tuple[Segment, ...], i: int, j: int) -> bool:
    while j < len(segments):
        kind, value = segments[j]
        if kind == GLOBSTAR:
            # ``**`` consumes zero or more names, none of them dot-names.
            for k in range(i, len(names) + 1):
                if _match_names(names, segments, k, j + 1):
                    return True
                if k < len(names) and names[k].startswith("."):
                    return False
            return False
        if i >= len(names):
            return False
        if kind == LITERAL:
            if names[i] != value:
                return False
        elif not (isinstance(value, re.Pattern) and value.match(names[i])):
            return False
        i += 1
        j += 1
    return i == len(names)


def compile_patterns(patterns: Iterable[str], base: str) -> list[GlobPattern]:
    """Every brace alternative of ``patterns``, anchored at ``base`` unless absolute.

    Raises ValueError when a pattern's braces expand to too many alternatives.
    A pattern ending in ``/`` names only folders, which are never fingerprinted, so it
    yields nothing.
    """
    compiled: list[GlobPattern] = []
    for pattern in patterns:
        for alternative in brace_alternatives(pattern):
            parsed = _parse(pattern, alternative, base)
            if parsed is not None:
                compiled.append(parsed)
    return compiled


def _parse(source: str, pattern: str, base: str) -> GlobPattern | None:
    if not pattern or pattern.endswith("/"):
        return None
    if pattern.startswith("~/"):
        pattern = os.path.expanduser("~") + pattern[1:]
    parts = [part for part in pattern.split("/") if part]
    if not parts:
        return None
    collapsed: list[str] = []
    for part in parts:
        if not (part == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(part)
    split = 0
    while split < len(collapsed) and not is_magic(collapsed[split]):
        split += 1
    anchor = "/" if pattern.startswith("/") else base
    root = os.path.normpath(os.path.join(anchor, *collapsed[:split]))
    rest = collapsed[split:]
    return GlobPattern(
        source=source,
        root=root,
        segments=tuple(compile_segment(part) for part in rest),
        needs_normalising=any(part in (".", "..") for part in rest),
    )


@dataclass(frozen=True)
class SkippedLink:
    """A matched path reached through a symlink that resolves where it may not read."""

    path: str
    target: str

    def describe(self) -> str:
        return (
            f"skipped symlink {self.path} -> {self.target}: it leads outside the workspace;"
            " to read it, name the target in watch.globs (a project monitor then waits for"
            " `agentmonitors monitor approve`)"
        )


class Confinement:
    """Where a followed symlink may lead: the workspace and approved outside paths.

    A path that involves no symlink is not judged here (what a definition names outside
    the workspace is the approval ledger's business); a path whose resolution differs
    from its lexical form must land inside one of ``roots``, compared after resolving
    them too, so a workspace reached through a symlinked parent still counts as inside.
    """

    def __init__(self, workspace: str, approved: Iterable[str] = ()) -> None:
        resolved = {os.path.realpath(path) for path in (workspace, *approved) if path}
        self.roots = tuple(sorted(resolved))
        self._real_folders: dict[str, str] = {}

    def allows(self, real: str) -> bool:
        """Whether the resolved path ``real`` lies inside one of the roots."""
        for root in self.roots:
            if real == root or real.startswith(root if root.endswith("/") else root + "/"):
                return True
        return False

    def resolve(self, path: str, is_link: bool) -> str:
        """``path`` with every symlink resolved; its folder's resolution is cached."""
        if is_link:
            return os.path.realpath(path)
        folder, name = os.path.split(path)
        real_folder = self._real_folders.get(folder)
        if real_folder is None:
            real_folder = os.path.realpath(folder)
            self._real_folders[folder] = real_folder
        return os.path.join(real_folder, name)


class _Lister:
    """Folder listings for one expansion, each folder read at most once."""

    def __init__(self) -> None:
        self._listings: dict[str, dict[str, tuple[bool, bool]]] = {}

    def entries(self, folder: str) -> dict[str, tuple[bool, bool]]:
        """``name -> (is_dir_following_symlinks, is_symlink)`` for each entry, or {}.

        An unreadable or vanished folder lists as empty (docs/compatibility.md); a
        tracked file inside it is then classified by ``stat``, which raises on
        anything but "not found".
        """
        listing = self._listings.get(folder)
        if listing is not None:
            return listing
        listing = {}
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    listing[entry.name] = (is_dir, entry.is_symlink())
        except OSError:
            listing = {}
        self._listings[folder] = listing
        return listing


def expand(
    patterns: Sequence[GlobPattern],
    confinement: Confinement | None = None,
    skipped: dict[str, SkippedLink] | None = None,
) -> list[str]:
    """Absolute paths of the non-folder entries ``patterns`` match, deduplicated.

    Entries are not yet checked to be readable files (see :func:`matched_files`). With
    a ``confinement``, a symlinked folder that leads outside it is never listed: it
    goes to ``skipped`` instead.
    """
    return list(_expand_marked(patterns, confinement, skipped))


def _expand_marked(
    patterns: Sequence[GlobPattern],
    confinement: Confinement | None,
    skipped: dict[str, SkippedLink] | None,
) -> dict[str, bool]:
    """Like :func:`expand`, each path mapped to whether a symlink may lie on it.

    False only when the walk saw every component (the pattern's root resolved as
    itself, then folders and the file as listed, none a symlink): such a path is its
    own resolution, so confinement needs no further ``lstat`` or ``realpath`` for it.
    """
    lister = _Lister()
    found: dict[str, bool] = {}
    fence = None if confinement is None else _Fence(confinement, skipped)
    for pattern in patterns:
        if pattern.needs_normalising:
            local: dict[str, bool] = {}
            _Walk(pattern, lister, local, fence).run()
            found.update(dict.fromkeys((os.path.normpath(path) for path in local), True))
        else:
            _Walk(pattern, lister, found, fence).run()
    return found


class _Fence:
    """Stops a walk at symlinked folders that leave a confinement, noting each once."""

    def __init__(self, confinement: Confinement, skipped: dict[str, SkippedLink] | None) -> None:
        self.confinement = confinement
        self.skipped = skipped if skipped is not None else {}

    def blocks(self, folder: str) -> bool:
        real = os.path.realpath(folder)
        if real == folder or self.confinement.allows(real):
            return False
        self.skipped.setdefault(folder, SkippedLink(folder, real))
        return True


class _Walk:
    """One pattern's expansion: a stack of (folder, segment index, via a symlink)."""

    def __init__(
        self,
        pattern: GlobPattern,
        lister: _Lister,
        found: dict[str, bool],
        fence: _Fence | None,
    ) -> None:
        self.segments = pattern.segments
        self.root = pattern.root
        self.last = len(pattern.segments) - 1
        self.lister = lister
        self.found = found
        self.fence = fence
        self.stack: list[tuple[str, int, bool]] = []

    def run(self) -> None:
        if not self.segments:
            self._add(self.root, True)  # never listed: its kind is unknown
            return
        root_linked = os.path.realpath(self.root) != self.root
        # The literal prefix may itself run through a symlink out of the workspace.
        if root_linked and self.fence is not None and self.fence.blocks(self.root):
            return
        seen: set[tuple[str, int]] = set()
        self.stack.append((self.root, 0, root_linked))
        while self.stack:
            folder, j, linked = self.stack.pop()
            if (folder, j) in seen:
                continue
            seen.add((folder, j))
            prefix = folder if folder.endswith("/") else folder + "/"
            kind, value = self.segments[j]
            if kind == GLOBSTAR:
                self._globstar(folder, prefix, j, linked)
            elif kind == LITERAL:
                assert isinstance(value, str)
                self._literal(folder, prefix, j, linked, value)
            else:
                assert isinstance(value, re.Pattern)
                self._magic(folder, prefix, j, linked, value)

    def _add(self, path: str, linked: bool) -> None:
        # A path reached both ways keeps the cautious mark.
        self.found[path] = linked or self.found.get(path, False)

    def _blocked(self, path: str, is_link: bool) -> bool:
        return is_link and self.fence is not None and self.fence.blocks(path)

    def _globstar(self, folder: str, prefix: str, j: int, linked: bool) -> None:
        entries = self.lister.entries(folder)
        if j == self.last:
            for name, (is_dir, is_link) in entries.items():
                if name.startswith("."):
                    continue
                if not is_dir:
                    self._add(prefix + name, linked or is_link)
                elif not is_link:
                    self.stack.append((prefix + name, j, linked))
            return
        self.stack.append((folder, j + 1, linked))
        for name, (is_dir, is_link) in entries.items():
            if is_dir and not name.startswith(".") and not self._blocked(prefix + name, is_link):
                # A symlinked folder is not crawled; its contents may still match the
                # segments after the ``**``.
                self.stack.append((prefix + name, j + 1 if is_link else j, linked or is_link))

    def _literal(self, folder: str, prefix: str, j: int, linked: bool, name: str) -> None:
        if j != self.last:
            # Not listed, so its kind is unknown: whatever lies below may be linked.
            self.stack.append((prefix + name, j + 1, True))
        elif name not in (".", ".."):
            kinds = self.lister.entries(folder).get(name)
            if kinds is not None and not kinds[0]:
                self._add(prefix + name, linked or kinds[1])

    def _magic(
        self, folder: str, prefix: str, j: int, linked: bool, pattern: re.Pattern[str]
    ) -> None:
        match = pattern.match
        entries = self.lister.entries(folder)
        if j == self.last:
            # Every matched file of a tree passes here: _add inlined, kinds tested
            # before the pattern.
            found = self.found
            for name, (is_dir, is_link) in entries.items():
                if not is_dir and match(name):
                    path = prefix + name
                    found[path] = linked or is_link or found.get(path, False)
            return
        for name, (is_dir, is_link) in entries.items():
            if is_dir and match(name) and not self._blocked(prefix + name, is_link):
                self.stack.append((prefix + name, j + 1, linked or is_link))


def outside_roots(globs: Sequence[GlobPattern], workspace: str) -> list[str]:
    """The folders ``globs`` name outside ``workspace``, judged lexically.

    A definition that reaches outside the workspace is itself subject to approval, so
    a symlink that stays within what it names is no escape.
    """
    # Lexical, not resolved: a folder named inside the workspace that is a symlink out
    # of it is exactly what must not count as named.
    root = os.path.normpath(os.path.abspath(workspace))
    prefix = root if root.endswith("/") else root + "/"
    return [
        pattern.watch_root
        for pattern in globs
        if pattern.watch_root != root and not pattern.watch_root.startswith(prefix)
    ]


def matched_files(
    globs: Sequence[GlobPattern], ignore: Sequence[GlobPattern]
) -> dict[str, os.stat_result]:
    """The regular files ``globs`` match minus ``ignore``, sorted, with their ``stat``.

    Symlinks are followed without confinement; see :func:`confined_files`.
    """
    return confined_files(globs, ignore, None)[0]


def confined_files(
    globs: Sequence[GlobPattern],
    ignore: Sequence[GlobPattern],
    confinement: Confinement | None,
) -> tuple[dict[str, os.stat_result], list[SkippedLink]]:
    """The regular files ``globs`` match minus ``ignore``, sorted, with their ``stat``.

    Symlinks are followed, except (with a ``confinement``) one whose target resolves
    outside it: that path is returned among the skipped links and its target is never
    examined. Folders, dangling symlinks, vanished entries and
    non-regular files (FIFOs, sockets, devices: reading could block) are dropped. Any
    other ``stat`` failure raises OSError naming the path: a matched file that cannot be
    examined is never guessed absent.
    """
    return _confined(globs, ignore, confinement, _whole)


StatKey = list[int]
"""``[size, mtime_ns, ctime_ns, inode]``: what must hold for a file to be unchanged."""


def confined_stat_keys(
    globs: Sequence[GlobPattern],
    ignore: Sequence[GlobPattern],
    confinement: Confinement | None,
) -> tuple[dict[str, StatKey], list[SkippedLink]]:
    """:func:`confined_files` keeping each file's :data:`StatKey` only: a whole stat
    result is ~0.5 KB more a file, most of a 100,000-file walk's peak memory."""
    return _confined(globs, ignore, confinement, _stat_key)


def _whole(info: os.stat_result) -> os.stat_result:
    return info


def _stat_key(info: os.stat_result) -> StatKey:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def _confined(
    globs: Sequence[GlobPattern],
    ignore: Sequence[GlobPattern],
    confinement: Confinement | None,
    kept: Callable[[os.stat_result], _Kept],
) -> tuple[dict[str, _Kept], list[SkippedLink]]:
    files: dict[str, _Kept] = {}
    skipped: dict[str, SkippedLink] = {}
    marked = _expand_marked(globs, confinement, skipped)
    # Bound once: this loop runs for every matched file.
    examine, is_regular = os.stat, stat.S_ISREG
    for path in sorted(marked):
        if ignore and any(pattern.matches(path) for pattern in ignore):
            continue
        try:
            if confinement is not None and marked[path]:
                link = stat.S_ISLNK(os.lstat(path).st_mode)
                real = confinement.resolve(path, link)
                if real != path and not confinement.allows(real):
                    skipped.setdefault(path, SkippedLink(path, real))
                    continue
            info = examine(path)
        except OSError as error:
            if error.errno in _MISSING:
                continue
            raise OSError(
                error.errno,
                f"Cannot read matched file {escape_undecodable(path)}: {error.strerror}",
            ) from error
        if is_regular(info.st_mode):
            files[path] = kept(info)
    return files, [skipped[path] for path in sorted(skipped)]


def exists(path: str) -> bool:
    """Whether ``path`` exists (symlinks followed); raises unless "not found"."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno in _MISSING:
            return False
        shown = escape_undecodable(path)
        raise OSError(error.errno, f"Cannot stat {shown}: {error.strerror}") from error
    return True

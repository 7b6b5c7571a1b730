"""Finding monitors: one root at a time, then project and user scope merged."""

from __future__ import annotations

import os
from collections.abc import Callable

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.parse import (
    FOLDER_MONITOR_FILE,
    ParseFailure,
    ParseOutcome,
    parse_monitor_file,
)
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.workspace import PROJECT_MONITORS_RELPATH, user_monitors_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Scope = Literal["project", "user"]
    # How one file is parsed; the daemon passes a cache that skips unchanged files.
    Parser = Callable[[str, Scope | None], ParseOutcome]
# A Markdown file that explains a monitors folder is not a monitor.
ROOT_README_NAMES = frozenset({"readme.md"})


@dataclass(frozen=True)
class DuplicateId:
    id: str
    file_paths: tuple[str, ...]


@dataclass(frozen=True)
class Shadowed:
    """A user-scope monitor hidden by a project monitor of the same id."""

    id: str
    kept_path: str
    shadowed_path: str


@dataclass(frozen=True)
class ScanResult:
    monitors: tuple[MonitorDefinition, ...] = ()
    errors: tuple[ParseFailure, ...] = ()
    duplicate_ids: tuple[DuplicateId, ...] = ()
    shadowed: tuple[Shadowed, ...] = field(default=())
    roots: tuple[str, ...] = ()


def find_monitor_files(root: str) -> tuple[list[str], list[ParseFailure]]:
    """Absolute, sorted paths of every monitor file under ``root``.

    Folder monitors are ``MONITOR.md`` at depth one or more; flat monitors are the
    other ``*.md`` files directly in the root (a root README is not a monitor).
    Dot-prefixed files and folders are skipped. Symlinked folders are followed once.
    """
    base = os.path.abspath(root)
    found: list[str] = []
    problems: list[ParseFailure] = []
    seen_dirs: set[str] = set()

    def on_error(error: OSError) -> None:
        where = os.path.abspath(error.filename) if error.filename else base
        if where != base:
            problems.append(
                ParseFailure(where, f"Failed to read directory: {error.strerror or error}")
            )

    for directory, subdirs, files in os.walk(base, onerror=on_error, followlinks=True):
        real = os.path.realpath(directory)
        if real in seen_dirs:
            subdirs[:] = []
            continue
        seen_dirs.add(real)
        subdirs[:] = sorted(name for name in subdirs if not name.startswith("."))
        at_root = directory == base
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(directory, name)
            if at_root:
                if (
                    name.endswith(".md")
                    and name != FOLDER_MONITOR_FILE
                    and name.lower() not in ROOT_README_NAMES
                ):
                    found.append(path)
            elif name == FOLDER_MONITOR_FILE:
                found.append(path)
    return sorted(found), problems


def scan_root(
    root: str, scope: Scope | None = None, parse: Parser = parse_monitor_file
) -> ScanResult:
    """Parse every monitor under one root. A missing root scans as empty."""
    base = os.path.abspath(root)
    paths, problems = find_monitor_files(base)
    monitors: list[MonitorDefinition] = []
    errors: list[ParseFailure] = list(problems)
    for path in paths:
        outcome = parse(path, scope)
        if isinstance(outcome, ParseFailure):
            errors.append(outcome)
        else:
            monitors.append(outcome)
    return ScanResult(
        monitors=tuple(monitors),
        errors=tuple(sorted(errors, key=lambda failure: failure.file_path)),
        duplicate_ids=find_duplicates(monitors),
        roots=(base,),
    )


def find_duplicates(monitors: list[MonitorDefinition]) -> tuple[DuplicateId, ...]:
    by_id: dict[str, list[str]] = {}
    for monitor in monitors:
        by_id.setdefault(monitor.id, []).append(monitor.file_path)
    return tuple(
        DuplicateId(monitor_id, tuple(paths))
        for monitor_id, paths in by_id.items()
        if len(paths) > 1
    )


def project_monitors_dir(workspace: str) -> str:
    return os.path.join(workspace, PROJECT_MONITORS_RELPATH)


def discover(
    workspace: str,
    include_user: bool = True,
    *,
    project_dir: str | None = None,
    parse: Parser = parse_monitor_file,
) -> ScanResult:
    """The monitors that apply to ``workspace``: its own plus the user's.

    A project monitor wins over a user monitor with the same id; the hidden one is
    reported in ``shadowed``. Duplicate ids are reported per scope, as each scope is
    its own tree.
    """
    project = scan_root(project_dir or project_monitors_dir(workspace), "project", parse)
    user_dir = user_monitors_dir() if include_user else None
    if user_dir is None or os.path.abspath(user_dir) == project.roots[0]:
        return project
    user = scan_root(user_dir, "user", parse)
    project_paths = {monitor.id: monitor.file_path for monitor in project.monitors}
    shadowed = tuple(
        Shadowed(monitor.id, project_paths[monitor.id], monitor.file_path)
        for monitor in user.monitors
        if monitor.id in project_paths
    )
    hidden = {entry.shadowed_path for entry in shadowed}
    return ScanResult(
        monitors=project.monitors
        + tuple(monitor for monitor in user.monitors if monitor.file_path not in hidden),
        errors=project.errors + user.errors,
        duplicate_ids=project.duplicate_ids + user.duplicate_ids,
        shadowed=shadowed,
        roots=project.roots + user.roots,
    )


def merge_scans(scans: list[ScanResult]) -> ScanResult:
    """Several scans reported as one (each keeps its own duplicate detection)."""
    return ScanResult(
        monitors=tuple(monitor for scan in scans for monitor in scan.monitors),
        errors=tuple(error for scan in scans for error in scan.errors),
        duplicate_ids=tuple(dup for scan in scans for dup in scan.duplicate_ids),
        shadowed=tuple(entry for scan in scans for entry in scan.shadowed),
        roots=tuple(root for scan in scans for root in scan.roots),
    )


def scan_file(path: str, parse: Parser = parse_monitor_file) -> ScanResult:
    """One monitor file, scanned like a root holding only it."""
    outcome = parse(path, None)
    if isinstance(outcome, ParseFailure):
        return ScanResult(errors=(outcome,), roots=(os.path.abspath(path),))
    return ScanResult(monitors=(outcome,), roots=(os.path.abspath(path),))


@dataclass(frozen=True)
class Targets:
    """What a ``validate``/``scan`` invocation covers, and the paths it could not use."""

    scan: ScanResult
    missing: tuple[str, ...] = ()


def scan_targets(
    paths: tuple[str, ...], workspace: str, parse: Parser = parse_monitor_file
) -> Targets:
    """Scan the given files and folders, or, with none, the workspace's effective set
    (its ``.claude/monitors`` plus the user's ``~/.claude/monitors``)."""
    if not paths:
        project_dir = project_monitors_dir(workspace)
        user_dir = user_monitors_dir()
        if not os.path.isdir(project_dir) and not (user_dir and os.path.isdir(user_dir)):
            return Targets(
                ScanResult(),
                (os.path.relpath(project_dir) if _inside_cwd(project_dir) else project_dir,),
            )
        return Targets(discover(workspace, parse=parse))
    scans: list[ScanResult] = []
    missing: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            scans.append(scan_root(path, parse=parse))
        elif os.path.isfile(path):
            scans.append(scan_file(path, parse))
        else:
            missing.append(path)
    return Targets(merge_scans(scans), tuple(missing))


def _inside_cwd(path: str) -> bool:
    try:
        return not os.path.relpath(path).startswith("..")
    except ValueError:
        return False

"""The monitors a tick runs: discovered, parsed once per file change, and checked.

Parsing and validating every MONITOR.md on every tick would dominate an idle
daemon's CPU; files are re-read only when their size, mtime or inode changes, and a
file whose bytes did not change since any earlier process parsed it is read back from
the compiled-definition cache (``catalog/compiled.py``).
"""

from __future__ import annotations

import os
from typing import Any

from agentmonitors.catalog.compiled import CompiledDefinitions
from agentmonitors.catalog.trust import (
    Requirement,
    carried_over,
    is_approved,
    permit_for,
    read_ledger,
    requirement_for,
)
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.discovery import discover
from agentmonitors.monitor.parse import ParseFailure, ParseOutcome
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.permit import Permit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.monitor.discovery import Scope


@dataclass(frozen=True)
class Problem:
    """A monitor that cannot run this tick, and why."""

    monitor_id: str
    message: str
    file_path: str
    source_name: str


@dataclass(frozen=True)
class Blocked:
    """A valid project monitor that waits for the user's ``monitor approve``."""

    monitor: MonitorDefinition
    requirement: Requirement


@dataclass(frozen=True)
class Definitions:
    runnable: tuple[MonitorDefinition, ...]
    problems: tuple[Problem, ...]
    blocked: tuple[Blocked, ...] = ()


def _key(monitor: MonitorDefinition) -> str:
    """A cache key per monitor: its file, or (a watch has none) its id."""
    return monitor.file_path or "\0watch:" + monitor.id


class DefinitionCache:
    def __init__(self, registry: SourceRegistry) -> None:
        self.registry = registry
        self.compiled = CompiledDefinitions(registry)
        self._parsed: dict[str, tuple[tuple[int, int, int], ParseOutcome]] = {}
        # Check results per monitor, valid while the parsed object is the cached one.
        self._checked: dict[str, tuple[MonitorDefinition, list[str]]] = {}
        self._required: dict[str, tuple[MonitorDefinition, Requirement | None]] = {}
        self._outside: dict[str, tuple[MonitorDefinition, frozenset[str]]] = {}
        self._permits: dict[str, tuple[MonitorDefinition, Permit]] = {}
        # The approval ledger as the last load read it (None: not read, none needed).
        self._ledger: dict[str, dict[str, Any]] | None = None
        # Approvals honoured under the older key in the last load (trust.carried_over).
        self.carried: list[Requirement] = []

    def parse(self, path: str, scope: Scope | None) -> ParseOutcome:
        try:
            info = os.stat(path)
        except OSError:
            return self.compiled.parse(path, scope)
        key = (info.st_size, info.st_mtime_ns, info.st_ino)
        cached = self._parsed.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        outcome = self.compiled.parse(path, scope)
        self._parsed[path] = (key, outcome)
        return outcome

    def errors_of(self, monitor: MonitorDefinition) -> list[str]:
        cached = self._checked.get(_key(monitor))
        if cached is not None and cached[0] is monitor:
            return cached[1]
        errors = self.compiled.checks(monitor)[0]
        self._checked[_key(monitor)] = (monitor, errors)
        return errors

    def requirement_of(self, monitor: MonitorDefinition, workspace: str) -> Requirement | None:
        cached = self._required.get(_key(monitor))
        if cached is not None and cached[0] is monitor:
            return cached[1]
        requirement = requirement_for(monitor, workspace, self.registry)
        self._required[_key(monitor)] = (monitor, requirement)
        return requirement

    def outside_paths_of(self, monitor: MonitorDefinition, workspace: str) -> frozenset[str]:
        """What a runnable monitor may read outside the workspace: what its globs name."""
        cached = self._outside.get(_key(monitor))
        if cached is not None and cached[0] is monitor:
            return cached[1]
        traits = self.registry.traits(monitor.source_name)
        paths = traits.outside_paths(monitor.source_config, workspace)
        self._outside[_key(monitor)] = (monitor, paths)
        return paths

    def permit_of(self, monitor: MonitorDefinition, workspace: str) -> Permit:
        """What an observation of ``monitor`` may do beyond the workspace, as the ledger
        the last load read allows it (sources/permit.py)."""
        cached = self._permits.get(_key(monitor))
        if cached is not None and cached[0] is monitor:
            return cached[1]
        try:
            requirement = self.requirement_of(monitor, workspace)
        except ValueError:
            requirement = None  # its source cannot say: nothing beyond the workspace
        approved = requirement is not None and is_approved(requirement, self._ledger or {})
        outside = self.outside_paths_of(monitor, workspace) if approved else frozenset()
        permit = permit_for(monitor, requirement, approved, outside)
        self._permits[_key(monitor)] = (monitor, permit)
        return permit

    def admit(
        self,
        monitor: MonitorDefinition,
        workspace: str,
        runnable: list[MonitorDefinition],
        problems: list[Problem],
        blocked: list[Blocked],
    ) -> None:
        """Put one valid-looking monitor (a file's or a watch's) where it belongs."""
        # A watch has no file: its declaration was checked when it was stored.
        errors = self.errors_of(monitor) if monitor.file_path else []
        if errors:
            problems.append(
                Problem(monitor.id, "; ".join(errors), monitor.file_path, monitor.source_name)
            )
            return
        try:
            requirement = self.requirement_of(monitor, workspace)
        except ValueError as error:
            problems.append(Problem(monitor.id, str(error), monitor.file_path, monitor.source_name))
            return
        if requirement is not None:
            # Read once per load, and only when some monitor needs approval.
            if self._ledger is None:
                self._ledger = read_ledger(workspace)
            if not is_approved(requirement, self._ledger):
                blocked.append(Blocked(monitor, requirement))
                return
            entry = self._ledger.get(monitor.id)
            if entry is not None and carried_over(requirement, entry):
                # Honoured under the older key; the daemon rewrites it (read-only
                # commands such as doctor never write the ledger).
                self.carried.append(requirement)
        runnable.append(monitor)

    def load(self, workspace: str, monitors_dir: str | None) -> Definitions:
        scan = discover(workspace, project_dir=monitors_dir, parse=self.parse)
        live = {monitor.file_path for monitor in scan.monitors}
        live |= {failure.file_path for failure in scan.errors}
        # Forget files that vanished, so the cache cannot grow without bound.
        for path in [path for path in self._parsed if path not in live]:
            del self._parsed[path]
            for cache in (self._checked, self._required, self._outside, self._permits):
                cache.pop(path, None)
            self.compiled.forget(path)
        # The ledger is read afresh on each load (an approval lands between ticks), and
        # the permits made from the last one go with it.
        self._ledger = None
        self._permits.clear()
        self.carried = []
        problems = [
            Problem(
                failure.id or failure.file_path,
                failure.error,
                failure.file_path,
                _source_of(failure),
            )
            for failure in scan.errors
        ]
        duplicated: dict[str, tuple[str, ...]] = {
            dup.id: dup.file_paths for dup in scan.duplicate_ids
        }
        runnable: list[MonitorDefinition] = []
        blocked: list[Blocked] = []
        for monitor in scan.monitors:
            if monitor.id not in duplicated:
                self.admit(monitor, workspace, runnable, problems, blocked)
        for monitor_id, paths in duplicated.items():
            problems.append(
                Problem(
                    monitor_id,
                    f'Duplicate monitor id "{monitor_id}" in {", ".join(paths)}; '
                    "ids come from folder names and must be unique",
                    paths[0],
                    "unknown",
                )
            )
        return Definitions(tuple(runnable), tuple(problems), tuple(blocked))

    def forget_watch(self, monitor_id: str) -> None:
        """Drop what is cached for a watch that ended."""
        key = "\0watch:" + monitor_id
        for cache in (self._checked, self._required, self._outside, self._permits):
            cache.pop(key, None)


def _source_of(failure: ParseFailure) -> str:
    watch = failure.watch_raw
    if isinstance(watch, dict) and isinstance(watch.get("type"), str):
        return str(watch["type"])
    return "unknown"

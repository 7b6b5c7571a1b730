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
    is_approved,
    read_ledger,
    requirement_for,
)
from agentmonitors.lean_dataclass import dataclass
from agentmonitors.monitor.discovery import Scope, discover
from agentmonitors.monitor.parse import ParseFailure, ParseOutcome
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.base import SourceRegistry


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


class DefinitionCache:
    def __init__(self, registry: SourceRegistry) -> None:
        self.registry = registry
        self.compiled = CompiledDefinitions(registry)
        self._parsed: dict[str, tuple[tuple[int, int, int], ParseOutcome]] = {}
        # Check results per file, valid while the parsed object is the cached one.
        self._checked: dict[str, tuple[MonitorDefinition, list[str]]] = {}
        self._required: dict[str, tuple[MonitorDefinition, Requirement | None]] = {}
        self._outside: dict[str, tuple[MonitorDefinition, frozenset[str]]] = {}

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
        cached = self._checked.get(monitor.file_path)
        if cached is not None and cached[0] is monitor:
            return cached[1]
        errors = self.compiled.checks(monitor)[0]
        self._checked[monitor.file_path] = (monitor, errors)
        return errors

    def requirement_of(self, monitor: MonitorDefinition, workspace: str) -> Requirement | None:
        cached = self._required.get(monitor.file_path)
        if cached is not None and cached[0] is monitor:
            return cached[1]
        requirement = requirement_for(monitor, workspace, self.registry)
        self._required[monitor.file_path] = (monitor, requirement)
        return requirement

    def outside_paths_of(self, monitor: MonitorDefinition, workspace: str) -> frozenset[str]:
        """What a runnable monitor may read outside the workspace: what its globs name."""
        cached = self._outside.get(monitor.file_path)
        if cached is not None and cached[0] is monitor:
            return cached[1]
        traits = self.registry.traits(monitor.source_name)
        paths = traits.outside_paths(monitor.source_config, workspace)
        self._outside[monitor.file_path] = (monitor, paths)
        return paths

    def load(self, workspace: str, monitors_dir: str | None) -> Definitions:
        scan = discover(workspace, project_dir=monitors_dir, parse=self.parse)
        live = {monitor.file_path for monitor in scan.monitors}
        live |= {failure.file_path for failure in scan.errors}
        # Forget files that vanished, so the cache cannot grow without bound.
        for path in [path for path in self._parsed if path not in live]:
            del self._parsed[path]
            self._checked.pop(path, None)
            self._required.pop(path, None)
            self._outside.pop(path, None)
            self.compiled.forget(path)
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
        ledger: dict[str, dict[str, Any]] | None = None
        for monitor in scan.monitors:
            if monitor.id in duplicated:
                continue
            errors = self.errors_of(monitor)
            if errors:
                problems.append(
                    Problem(monitor.id, "; ".join(errors), monitor.file_path, monitor.source_name)
                )
                continue
            try:
                requirement = self.requirement_of(monitor, workspace)
            except ValueError as error:
                problems.append(
                    Problem(monitor.id, str(error), monitor.file_path, monitor.source_name)
                )
                continue
            if requirement is not None:
                # Read once per load, and only when some monitor needs approval.
                ledger = read_ledger(workspace) if ledger is None else ledger
                if not is_approved(requirement, ledger):
                    blocked.append(Blocked(monitor, requirement))
                    continue
            runnable.append(monitor)
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


def _source_of(failure: ParseFailure) -> str:
    watch = failure.watch_raw
    if isinstance(watch, dict) and isinstance(watch.get("type"), str):
        return str(watch["type"])
    return "unknown"

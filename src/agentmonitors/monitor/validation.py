"""``validate``: parse, check each watch block against its source, report everything.

One bad monitor never stops the others from being checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmonitors.monitor.discovery import ScanResult
from agentmonitors.monitor.model import MonitorDefinition
from agentmonitors.monitor.parse import unknown_key_warnings
from agentmonitors.sources.base import SourceRegistry, known_keys_for, validate_scope


@dataclass(frozen=True)
class ValidationError:
    """One invalid monitor (or one duplicated id)."""

    key: str  # the monitor id, or the file path when no id can be derived
    error: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ValidationWarning:
    id: str
    warning: str
    path: str


@dataclass(frozen=True)
class ValidationReport:
    valid: tuple[MonitorDefinition, ...] = ()
    errors: tuple[ValidationError, ...] = ()
    warnings: tuple[ValidationWarning, ...] = ()
    scan: ScanResult = field(default_factory=ScanResult)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_monitor(
    monitor: MonitorDefinition, registry: SourceRegistry
) -> tuple[list[str], list[str]]:
    """Errors and warnings for one parsed monitor against the registered sources."""
    warnings = list(monitor.warnings)
    source = registry.get(monitor.source_name)
    if source is None:
        line = monitor.lines(("watch", "type")) if monitor.lines else None
        at = f" (line {line})" if line is not None else ""
        available = ", ".join(registry.names())
        return [
            f'Unknown source "{monitor.source_name}". Available sources: {available}{at}'
        ], warnings
    config = monitor.source_config
    lines = monitor.lines
    watch_lines = (lambda path: lines(("watch", *path))) if lines is not None else None
    errors = [issue.render("scope", watch_lines) for issue in validate_scope(source, config)]
    known = known_keys_for(source)
    if known is not None:
        warnings += unknown_key_warnings(config, (*known, "type"), "watch", monitor.lines)
    if not errors:
        advice = getattr(source, "config_warnings", None)
        if callable(advice):
            warnings += [str(item) for item in advice(config)]
    return errors, warnings


def validate_scan(scan: ScanResult, registry: SourceRegistry) -> ValidationReport:
    duplicated = {path for dup in scan.duplicate_ids for path in dup.file_paths}
    valid: list[MonitorDefinition] = []
    errors: list[ValidationError] = [
        ValidationError(failure.id or failure.file_path, failure.error, (failure.file_path,))
        for failure in scan.errors
    ]
    warnings: list[ValidationWarning] = []
    for monitor in scan.monitors:
        monitor_errors, monitor_warnings = check_monitor(monitor, registry)
        warnings += [
            ValidationWarning(monitor.id, text, monitor.file_path) for text in monitor_warnings
        ]
        if monitor_errors:
            errors.append(
                ValidationError(monitor.id, "; ".join(monitor_errors), (monitor.file_path,))
            )
        elif monitor.file_path not in duplicated:
            valid.append(monitor)
    for dup in scan.duplicate_ids:
        errors.append(
            ValidationError(
                dup.id,
                f'Duplicate monitor id "{dup.id}" -- ids are derived from folder names and must '
                "be unique within a tree",
                dup.file_paths,
            )
        )
    for entry in scan.shadowed:
        warnings.append(
            ValidationWarning(
                entry.id,
                f"the project monitor shadows the user-level monitor with the same id "
                f"({entry.shadowed_path}); project monitors win",
                entry.kept_path,
            )
        )
    return ValidationReport(tuple(valid), tuple(errors), tuple(warnings), scan)

"""``validate``: parse, check each watch block against its source, report everything.

One bad monitor never stops the others from being checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.discovery import ScanResult
from agentmonitors.monitor.issues import Issue, LineLookup
from agentmonitors.monitor.parse import ParseFailure, ParseOutcome
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.monitor.suggest import close_name, did_you_mean
from agentmonitors.sources.base import (
    ModelSource,
    SourceRegistry,
    known_keys_for,
    validate_scope,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentmonitors.sources.protocol import Source

# Every source's config sits under the authored ``watch:`` block, so that is the path
# its problems are reported at (``watch.globs``), whatever the model calls it.
WATCH = "watch"


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


def unknown_source(name: str, registry: SourceRegistry) -> str:
    """The message for a ``type:`` no registered source has, with the close name if any."""
    names = registry.names()
    return (
        f'Unknown source "{name}".{did_you_mean(name, names)} Available sources: {", ".join(names)}'
    )


def _unknown_source(name: str, lines: LineLookup | None, registry: SourceRegistry) -> str:
    line = lines(("watch", "type")) if lines is not None else None
    at = f" (line {line})" if line is not None else ""
    return unknown_source(name, registry) + at


def scope_issues(source: Source, config: Mapping[str, Any]) -> list[Issue]:
    """``validate_scope``'s issues, a missing required key naming the misspelling of it.

    ``pathz:`` for ``paths:`` is first an unknown key (a warning) and then a missing
    required one (the error): the error is what the author reads, so it says which
    authored key looks like the one missing.
    """
    issues = validate_scope(source, config)
    known = {*(known_keys_for(source) or ()), "type", "interval"}
    strays = [key for key in config if isinstance(key, str) and key not in known]
    if not strays:
        return issues
    hinted = []
    for issue in issues:
        typo = None
        if issue.message == "is required" and len(issue.path) == 1:
            typo = close_name(str(issue.path[0]), strays)
        if typo is None:
            hinted.append(issue)
            continue
        wanted = issue.path[0]
        message = f'is required; "{typo}" is no key of this source: did you mean "{wanted}"?'
        hinted.append(Issue(issue.path, message))
    return hinted


def _under_watch(lines: LineLookup | None) -> LineLookup | None:
    """Source-config issue paths are relative to the watch block."""
    if lines is None:
        return None
    return lambda path: lines(("watch", *path))


def watch_warnings(source: Source, config: dict[str, Any], lines: LineLookup | None) -> list[str]:
    """Unknown keys in a watch block (``type`` aside), at any depth its source models."""
    # Lazy: it walks pydantic models, which a cached monitor and the daemon's start never need.
    from agentmonitors.monitor.unknown_keys import model_unknown_key_warnings, unknown_key_warning

    # ``interval`` belongs to the runtime for every source.
    runtime_keys = ("type", "interval")
    if isinstance(source, ModelSource):
        return model_unknown_key_warnings(
            config, source.config_model, (WATCH,), lines, extra_known=runtime_keys
        )
    known = known_keys_for(source)
    if known is None:
        return []
    known_here = (*known, *runtime_keys)
    return [
        unknown_key_warning(str(key), (WATCH,), known_here, lines)
        for key in config
        if key not in known_here
    ]


def _watch_errors(source: Source, config: dict[str, Any], lines: LineLookup | None) -> list[str]:
    return [issue.render(WATCH, _under_watch(lines)) for issue in scope_issues(source, config)]


def one_per_mistake(messages: list[str]) -> list[str]:
    """Each message once, in order: the frontmatter and the source may both check a key."""
    return list(dict.fromkeys(messages))


def check_monitor(
    monitor: MonitorDefinition, registry: SourceRegistry
) -> tuple[list[str], list[str]]:
    """Errors and warnings for one parsed monitor against the registered sources."""
    warnings = list(monitor.warnings)
    source = registry.get(monitor.source_name)
    if source is None:
        return [_unknown_source(monitor.source_name, monitor.lines, registry)], warnings
    config = monitor.source_config
    errors = one_per_mistake(_watch_errors(source, config, monitor.lines))
    warnings += watch_warnings(source, config, monitor.lines)
    if not errors:
        advice = registry.traits(monitor.source_name).config_warnings(config)
        warnings += [str(item) for item in advice]
    return errors, warnings


def _failure_checks(
    watch: dict[str, Any] | None, lines: LineLookup | None, registry: SourceRegistry
) -> tuple[list[str], list[str]]:
    """Source-config errors and warnings of a monitor whose frontmatter failed elsewhere."""
    if watch is None or not isinstance(watch.get("type"), str):
        return [], []
    source = registry.get(watch["type"])
    if source is None:
        return [_unknown_source(watch["type"], lines, registry)], []
    config = {key: value for key, value in watch.items() if key != "type"}
    return _watch_errors(source, config, lines), watch_warnings(source, config, lines)


# A parsed file's source-config errors and warnings; the compiled-definition cache
# answers with what it stored for an unchanged file.
Checks = Callable[[ParseOutcome], tuple[list[str], list[str]]]


def outcome_checks(outcome: ParseOutcome, registry: SourceRegistry) -> tuple[list[str], list[str]]:
    """What ``validate`` checks beyond parsing, for a valid monitor or a failed one."""
    if isinstance(outcome, ParseFailure):
        return _failure_checks(outcome.watch_raw, outcome.lines, registry)
    return check_monitor(outcome, registry)


def validate_scan(
    scan: ScanResult, registry: SourceRegistry, checks: Checks | None = None
) -> ValidationReport:
    def live(outcome: ParseOutcome) -> tuple[list[str], list[str]]:
        return outcome_checks(outcome, registry)

    check = checks or live
    duplicated = {path for dup in scan.duplicate_ids for path in dup.file_paths}
    valid: list[MonitorDefinition] = []
    errors: list[ValidationError] = []
    warnings: list[ValidationWarning] = []
    for failure in scan.errors:
        extra, failure_warnings = check(failure)
        message = "; ".join(one_per_mistake([*failure.error.split("; "), *extra]))
        key = failure.id or failure.file_path
        errors.append(ValidationError(key, message, (failure.file_path,)))
        warnings += [
            ValidationWarning(key, text, failure.file_path)
            for text in (*failure.warnings, *failure_warnings)
        ]
    for monitor in scan.monitors:
        monitor_errors, monitor_warnings = check(monitor)
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

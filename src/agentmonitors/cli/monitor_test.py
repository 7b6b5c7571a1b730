"""``agentmonitors monitor test``: a dry run of one monitor, storing nothing."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import click

from agentmonitors.catalog.trust import is_approved, permit_for, read_ledger, requirement_for
from agentmonitors.cli.completion import complete_monitor_id_or_path
from agentmonitors.cli.output import (
    dump_json,
    format_option,
    print_document,
    print_error,
    report_error,
    warn,
)
from agentmonitors.clock import SystemClock
from agentmonitors.monitor.discovery import discover
from agentmonitors.monitor.parse import (
    FOLDER_MONITOR_FILE,
    ParseFailure,
    parse_monitor,
    read_monitor_text,
)
from agentmonitors.monitor.suggest import did_you_mean
from agentmonitors.sources.base import Source, validate_scope
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.permit import approve_command
from agentmonitors.sources.registry import load_registry
from agentmonitors.sources.traits import SourceTraits, traits_of
from agentmonitors.workspace import resolve_workspace

FOLLOWUP_DELAY_S = 0.1


def config_root_for(file_path: str) -> str:
    """The project a monitor file belongs to: the parent of its nearest ``.claude``/``.codex``.

    A file outside any such folder resolves against its own directory.
    """
    path = os.path.abspath(file_path)
    parts = path.split(os.sep)
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] in (".claude", ".codex"):
            return os.path.dirname(os.sep.join(parts[: index + 1]) or os.sep)
    return os.path.dirname(path)


def _globs_text(config: dict[str, Any]) -> str | None:
    globs = config.get("globs")
    if isinstance(globs, str):
        return globs
    if isinstance(globs, list) and all(isinstance(item, str) for item in globs):
        return ", ".join(globs)
    return None


def _observations_json(observations: list[Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for observation in observations:
        entry: dict[str, Any] = {"title": observation.title}
        if observation.snapshot is not None:
            entry["snapshot"] = observation.snapshot
        entries.append(entry)
    return entries


def _observations_text(observations: list[Any]) -> str:
    lines = [f"{len(observations)} observation(s):", ""]
    for observation in observations:
        lines.append(f"  Title: {observation.title}")
        lines.append(f"  Snapshot: {dump_json(observation.snapshot)}")
        lines.append("")
    return "\n".join(lines)


def _merged(*lists: list[str]) -> list[str]:
    seen: list[str] = []
    for items in lists:
        seen += [item for item in items if item not in seen]
    return seen


def _message(error: BaseException) -> str:
    return str(error).strip() or type(error).__name__


async def _observe_once(source: Source, config: dict[str, Any], context: Any) -> Any:
    outcome = await source.observe(config, context)
    if not isinstance(outcome, ObservationResult):
        raise TypeError(f'source "{source.name}" returned {type(outcome).__name__}')
    return outcome


def monitor_file_for(argument: str) -> str | None:
    """The monitor file ``argument`` names: the file itself, a monitor's folder, or an id.

    A file is taken as is, a folder holding ``MONITOR.md`` as that monitor. Anything
    else is looked up as a monitor id of the current project (or the user scope); a
    folder that is no monitor's id stays a folder, for the error that points at
    ``validate``. None: not found.
    """
    if os.path.isdir(argument):
        inside = os.path.join(argument, FOLDER_MONITOR_FILE)
        if os.path.isfile(inside):
            return inside
        # A project folder that shares a monitor's name (docs/ and a "docs" monitor)
        # holds no monitor: the id is what was meant.
        return _file_of_id(argument) or argument
    if os.path.exists(argument):
        return argument
    return _file_of_id(argument)


def _file_of_id(monitor_id: str) -> str | None:
    scan = discover(resolve_workspace())
    for monitor in scan.monitors:
        if monitor.id == monitor_id:
            return monitor.file_path
    for failure in scan.errors:
        if failure.id == monitor_id:
            return failure.file_path
    return None


def _known_ids_text() -> str:
    try:
        ids = sorted({monitor.id for monitor in discover(resolve_workspace()).monitors})
    except Exception:  # only a hint
        ids = []
    return f"known ids: {', '.join(ids)}" if ids else "the project defines no monitors"


def _not_found(argument: str) -> str:
    if os.sep in argument or argument.endswith(".md"):
        return f"Monitor file not found: {argument}"
    return (
        f'Monitor "{argument}" not found: no such file or folder, and no monitor has that id'
        f" ({_known_ids_text()})."
    )


def _load_for_test(path: str, fmt: str) -> tuple[Any, Any, Any] | int:
    """The parsed monitor and its source, or the exit code of the error reported."""
    if not os.path.exists(path):
        return report_error(f"Monitor file not found: {path}", fmt == "json")
    if os.path.isdir(path):
        return report_error(
            f'"{path}" is a directory, not a file. Pass a single MONITOR.md file. To'
            f" validate a whole directory, use: agentmonitors validate '{path}'",
            fmt == "json",
        )
    try:
        text = read_monitor_text(path)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return report_error(f"Cannot read monitor file: {reason}", fmt == "json")
    monitor = parse_monitor(text, path)
    if isinstance(monitor, ParseFailure):
        return report_error(f"Parse error: {monitor.error}", fmt == "json")
    registry = load_registry(warn)
    source = registry.get(monitor.source_name)
    if source is None:
        names = registry.names()
        close = did_you_mean(monitor.source_name, names)
        return report_error(
            f'Unknown source: "{monitor.source_name}".{close} Available: {", ".join(names)}',
            fmt == "json",
        )
    problems = [issue.render("watch") for issue in validate_scope(source, monitor.source_config)]
    if problems:
        return report_error(f"Invalid watch block: {'; '.join(problems)}", fmt == "json")
    return monitor, source, registry


def _no_files_matched(
    name: str,
    source: str,
    config: dict[str, Any],
    workspace: str,
    fmt: str,
    warnings: list[str],
) -> int:
    globs = _globs_text(config)
    message = (
        "No files matched this monitor's globs"
        + (f" (globs: {globs})" if globs is not None else "")
        + f". Check watch.globs and watch.cwd relative to workspace: {workspace}"
    )
    if fmt == "text":
        # Skipped symlinks may be why nothing matched: say so before the error.
        for item in warnings:
            warn(item)
        return report_error(message, False)
    result: dict[str, Any] = {
        "monitor": name,
        "source": source,
        "baseline": False,
        "outcome": "no-files-matched",
        "observations": [],
        "error": message,
    }
    if warnings:
        result["warnings"] = warnings
    print_document(result, fmt)
    return print_error(message)


def _test_json(
    name: str,
    source: str,
    baseline: bool,
    observations: list[Any],
    warnings: list[str],
    fmt: str,
) -> int:
    result: dict[str, Any] = {
        "monitor": name,
        "source": source,
        "baseline": baseline,
        "observations": _observations_json(observations),
    }
    if warnings:
        result["warnings"] = warnings
    print_document(result, fmt)
    return 0


def _report_first(name: str, source_name: str, first: ObservationResult, fmt: str) -> int:
    """What a stateless source (or a first run that already saw something) reports."""
    if fmt != "text":
        return _test_json(name, source_name, False, first.observations, list(first.warnings), fmt)
    for item in first.warnings:
        warn(item)
    click.echo(
        _observations_text(first.observations)
        if first.observations
        else "No observations produced."
    )
    return 0


def _announce_baseline(source_name: str, traits: SourceTraits, baseline_state: Any) -> None:
    click.echo(
        f'\nBaseline established. The "{source_name}" source requires a prior baseline'
        " before it can detect changes."
    )
    try:
        summary = traits.baseline_summary(baseline_state)
    except Exception:  # a plugin's summary is a courtesy; the test goes on without it
        summary = None
    if isinstance(summary, str):
        click.echo(summary)
    click.echo("Running a second observation to demonstrate change detection...\n")


def _report_second(
    name: str,
    source_name: str,
    traits: SourceTraits,
    first: ObservationResult,
    second: ObservationResult,
    fmt: str,
) -> int:
    warnings = _merged(list(first.warnings), list(second.warnings))
    if fmt != "text":
        return _test_json(name, source_name, True, second.observations, warnings, fmt)
    for item in warnings:
        warn(item)
    if second.observations:
        click.echo(_observations_text(second.observations))
        return 0
    click.echo(
        "No changes detected since baseline. This is expected — both observations happened"
        " within the same command invocation."
    )
    for note in traits.baseline_notes:
        click.echo(f"\n{note}")
    return 0


def _permit(monitor: Any, registry: Any, workspace: str, fmt: str) -> Any:
    """The permit the daemon would give ``monitor``, or the exit code of a refusal.

    A dry run acts on the world as a tick does (runs the command, sends the request,
    reads the files), so an unapproved project monitor is refused before anything runs.
    """
    try:
        requirement = requirement_for(monitor, workspace, registry)
    except ValueError as error:
        return report_error(str(error), fmt == "json")
    approved = requirement is not None and is_approved(requirement, read_ledger(workspace))
    if requirement is not None and not approved:
        return report_error(
            f'monitor "{monitor.id}" is not approved: this project monitor '
            f"{requirement.summary()}. Nothing was run. The user approves it with "
            f"`{approve_command(monitor.id)}`, then tests it again.",
            fmt == "json",
        )
    traits = registry.traits(monitor.source_name)
    outside = traits.outside_paths(monitor.source_config, workspace) if approved else frozenset()
    return permit_for(monitor, requirement, approved, outside)


def _run_test(monitor: Any, source: Any, registry: Any, path: str, fmt: str) -> int:
    """Observe once (twice for a stateful source's baseline) and report; stores nothing."""
    traits = traits_of(source)
    name, config = monitor.display_name, monitor.source_config
    workspace = config_root_for(path)
    permit = _permit(monitor, registry, workspace, fmt)
    if isinstance(permit, int):
        return permit

    def observe(previous: Any) -> Any:
        context = ObservationContext(
            previous_state=previous,
            now_ms=SystemClock().now_ms(),
            workspace_path=workspace,
            monitor_id=monitor.id,
            permit=permit,
        )
        return asyncio.run(_observe_once(traits, config, context))

    try:
        first = observe(None)
    except Exception as error:
        return report_error(f"Observation failed: {_message(error)}", fmt == "json")
    if first.outcome == "no-files-matched":
        return _no_files_matched(name, source.name, config, workspace, fmt, list(first.warnings))
    if first.observations or not traits.stateful:
        return _report_first(name, source.name, first, fmt)
    # A stateful source's first observation only records its baseline.
    baseline_state = first.next_state if first.has_next_state else None
    if fmt == "text":
        _announce_baseline(source.name, traits, baseline_state)
    time.sleep(FOLLOWUP_DELAY_S)
    try:
        second = observe(baseline_state)
    except Exception as error:
        return report_error(f"Observation failed: {_message(error)}", fmt == "json")
    return _report_second(name, source.name, traits, first, second, fmt)


@click.command(
    "test",
    help=(
        "Dry-run one monitor: observe it once, store nothing. MONITOR names its file, its"
        " folder or its id."
    ),
)
@click.argument("path", metavar="MONITOR", shell_complete=complete_monitor_id_or_path)
@format_option(("text", "json", "toon"), "text")
def test_monitor(path: str, output_format: str) -> int:
    """``path`` is what the user typed (``MONITOR``): a file, a folder or an id."""
    fmt = output_format
    found = monitor_file_for(path)
    if found is None:
        return report_error(_not_found(path), fmt == "json")
    loaded = _load_for_test(found, fmt)
    if isinstance(loaded, int):
        return loaded
    monitor, source, registry = loaded
    if fmt == "text":
        click.echo(f'Testing monitor "{monitor.display_name}" (source: {source.name})...')
    return _run_test(monitor, source, registry, found, fmt)

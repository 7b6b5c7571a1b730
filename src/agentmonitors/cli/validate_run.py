"""``agentmonitors validate``'s work, free of click.

It runs in editors and pre-commit hooks, where the start-up is most of its time, so the
entry point runs a plain invocation here without importing click (:func:`run_quick`);
the click command in ``cli/validate.py`` (``--help``, completion, usage errors) calls
the same :func:`run`.
"""

from __future__ import annotations

import os

from agentmonitors.catalog.compiled import CompiledDefinitions
from agentmonitors.catalog.trust import is_approved, read_ledger, requirement_for
from agentmonitors.catalog.validation import ValidationReport, validate_scan
from agentmonitors.cli.output import (
    clean_output,
    display_path,
    echo,
    print_document,
    print_error,
    report_error,
    warn,
)
from agentmonitors.fastpath.argv import VALUE, Spec
from agentmonitors.monitor.discovery import scan_targets
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.permit import approve_command
from agentmonitors.sources.registry import load_registry
from agentmonitors.workspace import resolve_workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# The click declaration's options, in fastpath/argv.py's form (tests/fastpath/test_argv.py).
VALIDATE_OPTIONS: Spec = {"--format": ("output_format", VALUE, ("text", "json", "toon"))}


def run_quick(args: list[str]) -> int | None:
    """Run ``validate ARGS`` without click, or None when click must parse them.

    Plain paths and ``--format`` only; ``--help``, ``--``, any other option, a bad
    format or shell completion go to click, so its usage errors stay its own.
    """
    if any(key.endswith("_COMPLETE") for key in os.environ if key.startswith("_")):
        return None
    paths: list[str] = []
    output_format = "text"
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name not in VALIDATE_OPTIONS:
            return None
        if not equals:
            if index >= len(args):
                return None
            value = args[index]
            index += 1
        choices = VALIDATE_OPTIONS[name][2]
        if choices is None or value not in choices:
            return None
        output_format = value
    try:
        return run(paths, output_format)
    except BrokenPipeError:
        return 1


def report_as_json(report: ValidationReport) -> dict[str, object]:
    return {
        "valid": len(report.valid),
        "invalid": len(report.errors),
        "monitors": [
            {
                "id": monitor.id,
                "name": monitor.display_name,
                "source": monitor.source_name,
                "filePath": monitor.file_path,
            }
            for monitor in report.valid
        ],
        "duplicateIds": [
            {"id": dup.id, "filePaths": list(dup.file_paths)} for dup in report.scan.duplicate_ids
        ],
        "errors": [
            # ``filePath`` holds the monitor id (a compatible name, kept); ``id`` says so.
            {
                "id": error.key,
                "filePath": error.key,
                "error": error.error,
                "paths": list(error.paths),
            }
            for error in report.errors
        ],
        "warnings": [
            {"id": warning.id, "warning": warning.warning, "filePath": warning.path}
            for warning in report.warnings
        ],
    }


def awaiting_approval(
    report: ValidationReport, workspace: str, registry: SourceRegistry
) -> list[dict[str, str]]:
    """Valid monitors that will not run until the user approves them (not an error)."""
    waiting: list[dict[str, str]] = []
    ledger = None
    for monitor in report.valid:
        try:
            requirement = requirement_for(monitor, workspace, registry)
        except ValueError as error:  # a plugin source that cannot say
            waiting.append({"id": monitor.id, "note": str(error), "filePath": monitor.file_path})
            continue
        if requirement is None:
            continue
        ledger = read_ledger(workspace) if ledger is None else ledger
        if not is_approved(requirement, ledger):
            waiting.append(
                {
                    "id": monitor.id,
                    "note": f"awaiting approval — it {requirement.summary()}; the user "
                    f"approves it with `{approve_command(monitor.id)}`",
                    "filePath": monitor.file_path,
                }
            )
    return waiting


def report_as_text(report: ValidationReport, waiting: list[dict[str, str]] | None = None) -> str:
    lines: list[str] = []
    if report.valid:
        lines.append(f"Valid monitors: {len(report.valid)}")
        lines += [f"  {monitor.id}: {monitor.display_name}" for monitor in report.valid]
    if report.errors:
        if lines:
            lines.append("")
        lines.append(f"Invalid monitors: {len(report.errors)}")
        for error in report.errors:
            lines.append(f"  {error.key}: {error.error}")
            lines.append(f"    in {', '.join(display_path(path) for path in error.paths)}")
    if report.warnings:
        if lines:
            lines.append("")
        lines.append(f"Warnings: {len(report.warnings)}")
        for warning in report.warnings:
            lines.append(f"  {warning.id}: {warning.warning}")
    if waiting:
        lines.append("")
        lines.append(f"Notes: {len(waiting)}")
        lines += [f"  {item['id']}: {item['note']}" for item in waiting]
    if not lines:
        lines.append("No monitors found.")
    return "\n".join(lines)


def run(paths: Sequence[str], output_format: str) -> int:
    """Validate ``paths`` (none: the project's and the user's monitors) and print the report."""
    as_json = output_format == "json"
    workspace = resolve_workspace()
    registry = load_registry(warn)
    # An unchanged monitor is read back compiled, without the YAML parser or pydantic.
    compiled = CompiledDefinitions(registry)
    targets = scan_targets(tuple(paths), workspace, compiled.parse)
    report = validate_scan(targets.scan, registry, compiled.checks)
    waiting = awaiting_approval(report, workspace, registry)
    path_errors = [f'path "{path}" does not exist' for path in targets.missing]
    if path_errors and not targets.scan.roots:
        hint = "" if paths else " — create a monitor with `agentmonitors init <name>`"
        return report_error("; ".join(path_errors) + ("" if as_json else hint), as_json)
    if output_format != "text":
        payload = report_as_json(report)
        payload["awaitingApproval"] = waiting
        if path_errors:
            payload["error"] = "; ".join(path_errors)
        print_document(payload, output_format)
    else:
        # Keys, names and paths quoted in the report are the monitor author's text.
        echo(clean_output(report_as_text(report, waiting)))
    # The report went to stdout; stderr says in one line why the exit is 1.
    reasons = list(path_errors)
    if report.errors:
        names = ", ".join(error.key for error in report.errors)
        reasons.append(f"{len(report.errors)} invalid monitor(s): {names}")
    if reasons:
        return print_error("; ".join(reasons))
    return 0

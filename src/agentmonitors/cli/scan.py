"""``agentmonitors scan [DIR]``: discovery only, no source checks."""

from __future__ import annotations

import os

import click

from agentmonitors.cli.output import emit, format_option, report_error, resolve_format, warn
from agentmonitors.monitor.discovery import ScanResult, scan_targets
from agentmonitors.workspace import resolve_workspace


def scan_as_json(scan: ScanResult) -> dict[str, object]:
    return {
        "monitors": [
            {
                "id": monitor.id,
                "name": monitor.display_name,
                "source": monitor.source_name,
                "urgency": monitor.frontmatter.band.lo,
                "urgencyMax": monitor.frontmatter.band.hi,
                "tags": list(monitor.frontmatter.tags or []),
                "notify": monitor.notify_as_authored(),
                "filePath": monitor.file_path,
            }
            for monitor in scan.monitors
        ],
        "errors": [{"filePath": error.file_path, "error": error.error} for error in scan.errors],
        "duplicateIds": [
            {"id": dup.id, "filePaths": list(dup.file_paths)} for dup in scan.duplicate_ids
        ],
    }


def scan_as_text(scan: ScanResult) -> str:
    if not scan.monitors and not scan.errors:
        return "No monitors found."
    lines = ["Monitors found:", ""]
    lines.append(f"{'ID':<30}  {'Name':<40}  {'Source':<20}  Urgency")
    lines.append("-" * 100)
    for monitor in scan.monitors:
        lines.append(
            f"{monitor.id:<30}  {monitor.display_name:<40}  {monitor.source_name:<20}  "
            f"{monitor.frontmatter.band}"
        )
    if scan.errors:
        lines += ["", f"{len(scan.errors)} file(s) failed to parse."]
        lines += [f"  {error.file_path}: {error.error}" for error in scan.errors]
    if scan.duplicate_ids:
        lines += ["", "Duplicate monitor id(s) — ids must be unique within a tree:"]
        lines += [f"  {dup.id}: {', '.join(dup.file_paths)}" for dup in scan.duplicate_ids]
    return "\n".join(lines)


@click.command(
    "scan",
    help="Find and summarise the monitors in DIR (default: the project's .claude/monitors "
    "and the user's ~/.claude/monitors).",
)
@click.argument("directory", required=False, type=click.Path(), metavar="[DIR]")
@format_option(("toon", "json", "text"), None)
def command(directory: str | None, output_format: str | None) -> int:
    fmt = resolve_format(output_format)
    as_json = fmt == "json"
    if directory is not None and os.path.exists(directory) and not os.path.isdir(directory):
        return report_error(f'path "{directory}" is not a directory', as_json)
    targets = scan_targets((directory,) if directory is not None else (), resolve_workspace())
    if targets.missing:
        return report_error(f'path "{targets.missing[0]}" does not exist', as_json)
    scan = targets.scan
    for entry in scan.shadowed:
        warn(f'project monitor "{entry.id}" shadows {entry.shadowed_path}')
    for monitor in scan.monitors:
        for text in monitor.warnings:
            warn(f"{monitor.id}: {text}")
    emit(scan_as_json(scan), fmt, lambda: scan_as_text(scan))
    return 1 if scan.errors or scan.duplicate_ids else 0

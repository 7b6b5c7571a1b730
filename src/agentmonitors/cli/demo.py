"""``agentmonitors demo``: a throwaway workspace that shows the authoring loop working."""

from __future__ import annotations

import os
import shutil
import tempfile

import click

from agentmonitors.cli.output import display_path
from agentmonitors.cli.scan import scan_as_text
from agentmonitors.cli.validate import report_as_text
from agentmonitors.monitor.discovery import scan_root
from agentmonitors.monitor.scaffold import SOURCE_TYPES, ensure_gitignore, scaffold_monitor
from agentmonitors.monitor.validation import validate_scan
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.workspace import PROJECT_MONITORS_RELPATH, enable_workspace, read_local_state

BROKEN_EXAMPLE = """---
name: Broken on purpose
watch:
  type: file-fingerprint
  globs: 42
notify:
  strategy: debounce
  settle-for: 5 minutes
---
Shows what validate says about mistakes.
"""


@click.command(
    "demo",
    help="Build an example workspace in a temporary folder: enable it, scaffold one monitor "
    "per source, add a broken one, and show what scan and validate report.",
)
@click.option("--keep", is_flag=True, help="Keep the example workspace and print its path.")
def command(keep: bool) -> int:
    workspace = tempfile.mkdtemp(prefix="agentmonitors-demo-")
    try:
        monitors_dir = os.path.join(workspace, PROJECT_MONITORS_RELPATH)
        enable_workspace(workspace)
        ensure_gitignore(workspace)
        click.echo(f"Example workspace: {workspace}")
        click.echo(f"  enabled: {read_local_state(workspace).enabled}")
        for source_type in SOURCE_TYPES:
            result = scaffold_monitor(monitors_dir, f"example-{source_type}", source_type)
            click.echo(f"  scaffolded {display_path(result.file_path, workspace)}")
        broken = os.path.join(monitors_dir, "broken-example.md")
        with open(broken, "w", encoding="utf-8") as handle:
            handle.write(BROKEN_EXAMPLE)
        click.echo(f"  added {display_path(broken, workspace)} (invalid on purpose)")
        scan = scan_root(monitors_dir, "project")
        report = validate_scan(scan, bundled_registry())
        click.echo("\n$ agentmonitors scan\n" + scan_as_text(scan))
        click.echo("\n$ agentmonitors validate\n" + report_as_text(report))
        expected_valid = len(SOURCE_TYPES)
        ok = len(report.valid) == expected_valid and len(report.errors) == 1
        click.echo(
            f"\nDemo {'passed' if ok else 'FAILED'}: {len(report.valid)} of {expected_valid} "
            f"scaffolded monitors valid, {len(report.errors)} invalid (1 expected)."
        )
        if keep:
            click.echo(f"Kept {workspace}")
        return 0 if ok else 1
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)

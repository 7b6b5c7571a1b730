"""``agentmonitors validate [PATH]...``: the click command over ``cli/validate_run.py``."""

from __future__ import annotations

import click

from agentmonitors.cli.output import format_option
from agentmonitors.cli.validate_run import run


@click.command(
    "validate",
    help="Validate monitors: each PATH is a monitors folder or a monitor file. With no "
    "PATH, the project's .claude/monitors and the user's ~/.claude/monitors.",
)
@click.argument("paths", nargs=-1, type=click.Path())
@format_option(("text", "json", "toon"), "text")
def command(paths: tuple[str, ...], output_format: str) -> int:
    return run(paths, output_format)

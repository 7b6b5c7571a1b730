"""``agentmonitors schema generate [-o FILE]``"""

from __future__ import annotations

import os

import click

from agentmonitors.catalog.schema import generate_monitor_schema
from agentmonitors.cli.output import dump_json, report_error, warn
from agentmonitors.sources.registry import load_registry


@click.group("schema", help="JSON Schema for MONITOR.md frontmatter.")
def command() -> None:
    pass


@command.command(
    "generate",
    help="Print the JSON Schema (draft-07) of MONITOR.md frontmatter, covering every "
    "installed source; point your editor's YAML support at it.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE instead.")
def generate(output: str | None) -> int:
    text = dump_json(generate_monitor_schema(load_registry(warn)))
    if output is None:
        click.echo(text)
        return 0
    try:
        # The README's editor example writes into a folder (.vscode/) that may not exist.
        folder = os.path.dirname(output)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as error:
        return report_error(f"cannot write {output}: {error.strerror or error}", False)
    click.echo(f"Schema written to {output}")
    return 0

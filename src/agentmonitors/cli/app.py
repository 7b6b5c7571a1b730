"""The click application behind ``agentmonitors``.

Subcommands are imported only when invoked, so ``--help`` and each command pay for
their own imports alone. Usage errors print one ``error: …`` line and exit 2; every
command returns 0 or 1 (docs/cli.md).
"""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

COMMANDS: LazyTable = {
    "channel": ("agentmonitors.cli.channel", "The optional MCP channel (channel serve)."),
    "daemon": (
        "agentmonitors.cli.daemon",
        "The workspace daemon: once, run, start, status, stop.",
    ),
    "doctor": (
        "agentmonitors.cli.doctor",
        "Check the workspace end to end: monitors, daemon, sessions, delivery.",
    ),
    "demo": ("agentmonitors.cli.demo", "Run the authoring loop on an example workspace."),
    "monitor": ("agentmonitors.cli.monitor", "One monitor: test, approve, history, explain."),
    "events": ("agentmonitors.cli.events", "A session's events: list, acknowledge, follow."),
    "hook": ("agentmonitors.cli.hook", "Deliveries at agent hooks (deliver, rewake, claim)."),
    "session": ("agentmonitors.cli.session", "Agent sessions: start, end, open, close, list."),
    "init": ("agentmonitors.cli.init", "Bootstrap a project (no name) or scaffold a monitor."),
    "validate": ("agentmonitors.cli.validate", "Validate monitor files and folders."),
    "verify": ("agentmonitors.cli.verify", "Prove a monitor delivers end to end."),
    "watch": ("agentmonitors.cli.watch", "A session's own watches: declare, list, cancel."),
    # The agent's read-only follow-ups, one module each (cli/read_only_query.py).
    "snapshot": (
        "agentmonitors.cli.snapshot:snapshot",
        "The latest stored snapshot of a watched object (read-only).",
    ),
    "diff": (
        "agentmonitors.cli.diff:diff",
        "A watched object's change between two stored points (read-only).",
    ),
    "summary": (
        "agentmonitors.cli.summary:summary",
        "A monitor's objects at a glance: urgency, change, counts.",
    ),
    "inspect": (
        "agentmonitors.cli.inspect:inspect",
        "A session's changes: received, pending, armed (read-only).",
    ),
    "scan": ("agentmonitors.cli.scan", "Find and summarise the monitors in a folder."),
    "schema": ("agentmonitors.cli.schema", "JSON Schema for MONITOR.md frontmatter (generate)."),
    "source": (
        "agentmonitors.cli.source",
        "Observation sources: list, search, install, update, remove.",
    ),
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    shorten=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Durable observation and inbox delivery for AI agents",
)
@click.version_option(version=None, package_name="agentmonitors", message="%(version)s")
def cli() -> None:
    pass


def run(args: list[str]) -> int:
    if not args:
        args = ["--help"]
    try:
        result: Any = cli.main(args, prog_name="agentmonitors", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        # A group named alone asks what it holds: its help, as ``agentmonitors`` alone.
        click.echo(error.ctx.get_help() if error.ctx is not None else "")
        return 0
    except click.exceptions.UsageError as error:
        click.echo(f"error: {error.format_message()}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        return 1
    except click.exceptions.ClickException as error:
        click.echo(f"error: {error.format_message()}", err=True)
        return 1
    except BrokenPipeError:
        return 1
    if isinstance(result, int):
        return result if result in (0, 1, 2) else 1
    return 0

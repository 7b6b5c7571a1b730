"""``agentmonitors init``: bootstrap a project, or scaffold one monitor."""

from __future__ import annotations

import os
import sys

import click
from click.shell_completion import CompletionItem

from agentmonitors.catalog.scaffold import (
    DEFAULT_MONITOR_NAME,
    DEFAULT_TYPE,
    GITIGNORE_LINES,
    PRESET_TYPES,
    SOURCE_TYPES,
    ScaffoldError,
    ScaffoldResult,
    ensure_gitignore,
    known_type,
    scaffold_monitor,
    type_choices,
    unknown_type,
)
from agentmonitors.catalog.trust import approval_refusal, approve_file, requirement_for
from agentmonitors.catalog.validation import validate_scan
from agentmonitors.cli.common_options import dir_option
from agentmonitors.cli.output import display_path
from agentmonitors.monitor.discovery import scan_root
from agentmonitors.monitor.parse import ParseFailure, parse_monitor_file
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.registry import load_registry
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS
from agentmonitors.transports.hosts.install import (
    CREATED,
    UNCHANGED,
    HookInstallError,
    install_hooks,
)
from agentmonitors.untrusted import clean_line
from agentmonitors.workspace import (
    ENABLE_FILE_RELPATH,
    PROJECT_MONITORS_RELPATH,
    enable_workspace,
    resolve_workspace,
)

APPROVAL_SUMMARY_CHARS = 100


def _validate_new(result: ScaffoldResult, registry: SourceRegistry) -> bool:
    """Validate the folder holding a freshly written monitor and print the verdict."""
    report = validate_scan(scan_root(os.path.dirname(result.monitor_dir)), registry)
    mine = [error for error in report.errors if result.file_path in error.paths]
    if mine:
        for error in mine:
            click.echo(f"  {error.key}: {error.error}", err=True)
        return False
    click.echo(f"  {os.path.basename(result.monitor_dir)}: valid")
    return True


def _shown(summary: str) -> str:
    """An approval summary on one line, cut with a mark (a preset's script is pages long)."""
    summary = clean_line(summary)
    if len(summary) > APPROVAL_SUMMARY_CHARS:
        left_out = len(summary) - APPROVAL_SUMMARY_CHARS
        summary = (
            f"{summary[:APPROVAL_SUMMARY_CHARS]}… ({left_out:,} more characters: "
            "`agentmonitors monitor approve --list` shows all)"
        )
    return summary


def _approve_created(
    result: ScaffoldResult | None, workspace: str, registry: SourceRegistry, assume_yes: bool
) -> None:
    """What the user creates is theirs: approve it as written (see catalog/trust.py).

    Only when the user is there: at a terminal or with ``--yes``, and never where an
    agent host's variables say an agent runs ``init`` (then it waits for the user's
    ``monitor approve``, like anything else an agent writes).
    """

    if result is None:
        return
    refusal = approval_refusal(assume_yes)
    if refusal is not None:
        outcome = parse_monitor_file(result.file_path, "project")
        if isinstance(outcome, ParseFailure):
            return
        try:
            waiting = requirement_for(outcome, workspace, registry)
        except ValueError:
            return
        if waiting is not None:
            click.echo(
                f"Not approved ({refusal}): it {_shown(waiting.summary())} "
                f"and runs only after `agentmonitors monitor approve {outcome.id}`."
            )
        return
    try:
        requirement = approve_file(result.file_path, workspace, registry)
    except OSError as error:
        click.echo(f"Warning: could not record the approval: {error.strerror or error}", err=True)
        return
    if requirement is not None:
        name = os.path.basename(result.monitor_dir)
        click.echo(
            f"Approved as created ({_shown(requirement.summary())}); after you change what it runs "
            f"or reads, approve it again with `agentmonitors monitor approve {name}`."
        )


def _scaffold(
    workspace: str,
    monitors_dir: str,
    name: str,
    source_type: str,
    display_name: str | None,
    urgency: str | None,
    globs: tuple[str, ...],
    commands: tuple[str, ...],
    registry: SourceRegistry,
    assume_yes: bool,
) -> int:
    try:
        result = scaffold_monitor(
            monitors_dir,
            name,
            source_type,
            display_name=display_name,
            urgency=urgency,
            patterns=globs,
            command=commands,
            registry=registry,
        )
    except ScaffoldError as error:
        click.echo(f"error: {error}", err=True)
        return 1
    except OSError as error:
        click.echo(f"error: cannot create the monitor: {error.strerror or error}", err=True)
        return 1
    shown_dir = display_path(monitors_dir)
    if not result.created:
        click.echo(f"error: Monitor already exists: {display_path(result.file_path)}", err=True)
        return 1
    click.echo(f"Created monitor: {display_path(result.file_path)}")
    _approve_created(result, workspace, registry, assume_yes)
    if result.note is not None:
        click.echo(f"\n{result.note} Check it with:")
    else:
        click.echo("\nEdit it to say what to watch and what the agent should do, then run:")
    click.echo(f"  agentmonitors validate {shown_dir}")
    return 0


def _starter_choice(
    source_type: str, assume_yes: bool, registry: SourceRegistry
) -> tuple[str, str] | None:
    """(name, type) of the starter monitor to scaffold: asked at a terminal, the default
    with --yes, None otherwise."""
    if assume_yes:
        return (DEFAULT_MONITOR_NAME, source_type)
    if not sys.stdin.isatty() or not click.confirm("Scaffold a starter monitor now?", default=True):
        return None
    picked = click.prompt(
        "Source type or preset",
        type=click.Choice(type_choices(registry)),
        default=DEFAULT_TYPE,
    )
    picked_name = click.prompt("Monitor name", default=DEFAULT_MONITOR_NAME)
    return (picked_name, picked)


def _host_hooks(host: str, workspace: str) -> tuple[bool, list[str]] | None:
    """Install the host's project hooks: (whether the file changed, lines to print).

    None after printing the error (a hook file that cannot be merged is left as is).
    """

    try:
        installed = install_hooks(host, workspace)
    except HookInstallError as error:
        click.echo(f"error: {error}", err=True)
        return None
    except OSError as error:
        click.echo(f"error: cannot write the {host} hooks: {error.strerror or error}", err=True)
        return None
    if installed is None:
        return False, []
    label = {CREATED: "Installed hooks", UNCHANGED: "Hooks already installed"}.get(
        installed.status, "Added hooks to"
    )
    lines = [f"  {label:<27} {display_path(installed.path)} ({host})"]
    lines += [f"  {note}" for note in installed.notes]
    return installed.status != UNCHANGED, lines


def _bootstrap(
    workspace: str,
    monitors_dir: str,
    source_type: str,
    enable_only: bool,
    assume_yes: bool,
    registry: SourceRegistry,
    host: str = "claude-code",
) -> int:
    try:
        enable_status = enable_workspace(workspace)
        gitignore_status = ensure_gitignore(workspace)
    except OSError as error:
        click.echo(f"error: cannot set up {workspace}: {error.strerror or error}", err=True)
        return 1
    hooks = _host_hooks(host, workspace)
    if hooks is None:
        return 1
    hooks_changed, hook_lines = hooks
    created: ScaffoldResult | None = None
    existing: ScaffoldResult | None = None
    skipped_noninteractive = False
    if not enable_only:
        choice = _starter_choice(source_type, assume_yes, registry)
        skipped_noninteractive = choice is None and not assume_yes and not sys.stdin.isatty()
        if choice is not None:
            try:
                result = scaffold_monitor(monitors_dir, choice[0], choice[1], registry=registry)
            except ScaffoldError as error:
                click.echo(f"error: {error}", err=True)
                return 1
            created, existing = (result, None) if result.created else (None, result)
            _approve_created(created, workspace, registry, assume_yes)
    ignored = ", ".join(GITIGNORE_LINES)
    unchanged = enable_status == "already-enabled" and gitignore_status == "present"
    if unchanged and created is None and not hooks_changed:
        click.echo("AgentMon is already set up in this project — nothing to change.")
        click.echo(f"  Monitoring enabled:  {ENABLE_FILE_RELPATH}")
        click.echo(f"  .gitignore already ignores {ignored}")
        for line in hook_lines:
            click.echo(line)
        click.echo("\nAdd a monitor with:  agentmonitors init <name> --type <type>")
        return 0
    click.echo(f"AgentMon project setup in {workspace}")
    enabled_label = (
        "Monitoring already enabled" if enable_status == "already-enabled" else "Enabled monitoring"
    )
    ignore_label = (
        ".gitignore already ignores" if gitignore_status == "present" else "Updated .gitignore"
    )
    click.echo(f"  {enabled_label:<27} {ENABLE_FILE_RELPATH}")
    click.echo(f"  {ignore_label:<27} {ignored}")
    for line in hook_lines:
        click.echo(line)
    if created is not None:
        click.echo(f"  {'Scaffolded monitor':<27} {display_path(created.file_path)}")
        click.echo(f"\nValidating {display_path(created.file_path)}:")
        if not _validate_new(created, registry):
            return 1
    elif existing is not None:
        click.echo(
            f"  {'Monitor already exists':<27} {display_path(existing.file_path)} (left unchanged)"
        )
    shown_dir = display_path(monitors_dir)
    click.echo("\nWhat happens next")
    if os.path.isdir(monitors_dir):
        # Suggested only where it succeeds: validating a folder that is not there fails.
        click.echo(f"  • Check your monitors any time:  agentmonitors validate {shown_dir}")
    if created is None:
        click.echo(
            "  • Add a monitor:  agentmonitors init <name> --type <"
            + "|".join(type_choices(registry))
            + ">"
        )
        if skipped_noninteractive:
            click.echo("    (or re-run `agentmonitors init --yes` to scaffold a starter monitor)")
    return 0


def _complete_type(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The bundled and installed source types, then the presets."""
    del ctx, param
    try:
        names = type_choices(load_registry(lambda problem: None))
    except Exception:  # completion never breaks the shell
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


@click.command(
    "init",
    help="With NAME, scaffold <dir>/NAME/MONITOR.md. Without, set the project up: enable "
    "monitoring, update .gitignore and (with --yes or at a prompt) add a starter monitor.",
)
@click.argument("name", required=False)
@dir_option
@click.option(
    "--type",
    "source_type",
    metavar="TYPE",
    shell_complete=_complete_type,
    default=DEFAULT_TYPE,
    show_default=True,
    help=f"Observation source of the new monitor: {', '.join(SOURCE_TYPES)} or an installed "
    f"plugin's (agentmonitors source list); or a ready-made monitor: {', '.join(PRESET_TYPES)}.",
)
@click.option("--enable-only", is_flag=True, help="Only enable the project and update .gitignore.")
@click.option(
    "--yes",
    "assume_yes",
    is_flag=True,
    help="No prompts: scaffold a starter monitor, and approve what is created without a "
    "terminal (refused where an agent host's variables are set).",
)
@click.option("--glob", "globs", multiple=True, help="Seed watch.globs / watch.paths (repeatable).")
@click.option(
    "--command", "commands", multiple=True, help="Seed watch.command, one argv token per flag."
)
@click.option("--name", "display_name", help="Seed the frontmatter name:.")
@click.option("--urgency", type=click.Choice(("low", "normal", "high")), help="Seed urgency:.")
@click.option(
    "--host",
    type=click.Choice(HOSTS),
    default=DEFAULT_HOST,
    show_default=True,
    help="The agent host to wire: claude-code (its hooks come with the plugin), codex "
    "(hooks in .codex/) or cursor (.cursor/hooks.json); merged with what is there.",
)
def command(
    name: str | None,
    monitors_dir: str | None,
    source_type: str,
    enable_only: bool,
    assume_yes: bool,
    globs: tuple[str, ...],
    commands: tuple[str, ...],
    display_name: str | None,
    urgency: str | None,
    host: str,
) -> int:
    workspace = resolve_workspace()
    target_dir = monitors_dir or os.path.join(workspace, PROJECT_MONITORS_RELPATH)
    registry = load_registry()
    if not known_type(source_type, registry):  # checked first: a bad --type changes nothing
        click.echo(f"error: {unknown_type(source_type, registry)}", err=True)
        return 1
    if name is not None:
        if enable_only or host != DEFAULT_HOST:
            raise click.UsageError("--enable-only and --host apply only to `init` without a name")
        return _scaffold(
            workspace,
            target_dir,
            name,
            source_type,
            display_name,
            urgency,
            globs,
            commands,
            registry,
            assume_yes,
        )
    return _bootstrap(workspace, target_dir, source_type, enable_only, assume_yes, registry, host)

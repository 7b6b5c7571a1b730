"""``agentmonitors monitor approve``: the user lets a project monitor run or read beyond the repo.

Only the user runs this: it needs an interactive terminal (or ``--yes`` in the user's
own scripts) and is refused wherever an agent host's variables are set, so an agent
allowed to run ``agentmonitors`` cannot approve for the user (docs/security.md). An
approval covers exactly what the monitor runs, reads or sends now (command, cwd, env
names and values, outside globs, URL origins, headers and credentials): edit any of it
and it waits again. Agent-declared watches are approved the same way, by their id.
"""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.catalog.definitions import DefinitionCache
from agentmonitors.catalog.trust import (
    approval_refusal,
    ledger_path,
    read_ledger,
    record_approvals,
)
from agentmonitors.cli.common_options import dir_option, workspace_option
from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.output import emit, format_option, report_error, resolve_format, warn
from agentmonitors.cli.tick_once import workspace_and_monitors
from agentmonitors.diagnosis.doctor_store import open_read_only
from agentmonitors.paths import resolve_db_path
from agentmonitors.runtime.ephemeral import EphemeralDefinitions
from agentmonitors.sources.registry import load_registry
from agentmonitors.untrusted import clean_line


def _entry(
    monitor: Any, requirement: Any, status: str, ledger: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    recorded = ledger.get(monitor.id) or {}
    return {
        "monitorId": monitor.id,
        "status": status,
        "sourceName": monitor.source_name,
        "filePath": monitor.file_path,
        "summary": requirement.summary(),
        "reach": requirement.reach,
        "hash": requirement.digest,
        "approvedAt": recorded.get("approvedAt") if status == "approved" else None,
    }


def _listing(definitions: Any, cache: Any, workspace: str) -> list[dict[str, Any]]:
    """Every monitor that needs approval: the approved first, then those that wait."""
    ledger = read_ledger(workspace)
    rows: list[dict[str, Any]] = []
    for monitor in definitions.runnable:
        requirement = cache.requirement_of(monitor, workspace)
        if requirement is not None:
            rows.append(_entry(monitor, requirement, "approved", ledger))
    for blocked in definitions.blocked:
        rows.append(_entry(blocked.monitor, blocked.requirement, "awaiting-approval", ledger))
    return rows


def _listing_text(rows: list[dict[str, Any]], ledger: str) -> str:
    if not rows:
        return "No monitor of this project runs a command or reads outside it: nothing to approve."
    lines = []
    for row in rows:
        mark = "approved" if row["status"] == "approved" else "waits   "
        lines.append(f"{mark}  {row['monitorId']}: {row['summary']}")
    waiting = [row["monitorId"] for row in rows if row["status"] != "approved"]
    if waiting:
        lines.append(
            "Approve after reading what each runs: `agentmonitors monitor approve <id>` (or --all)."
        )
    lines.append(f"Approvals are kept in {ledger}.")
    return "\n".join(lines)


@click.command(
    "approve",
    help="Let project monitors that run a command, fetch a URL or read outside the project "
    "run (only the user approves; never an agent). A changed definition waits again. "
    "MONITOR_IDS names the monitors to approve; without them, pass --all (every monitor "
    "that waits) or --list (show what is approved and what waits).",
)
@click.argument("monitor_ids", nargs=-1, shell_complete=complete_monitor_id)
@click.option("--all", "approve_all", is_flag=True, help="Approve every monitor that waits.")
@click.option("--list", "list_only", is_flag=True, help="Show what is approved and what waits.")
@workspace_option
@dir_option
@click.option(
    "--yes",
    "without_terminal",
    is_flag=True,
    help="Approve without an interactive terminal and without asking (for your own "
    "scripts). Refused where an agent host's variables (CLAUDECODE, ...) are set.",
)
@format_option(("toon", "json", "text"), None)
def approve(
    monitor_ids: tuple[str, ...],
    approve_all: bool,
    list_only: bool,
    workspace: str | None,
    monitors_dir: str | None,
    without_terminal: bool,
    output_format: str | None,
) -> int:
    fmt = resolve_format(output_format)
    as_json = fmt == "json"
    chosen = sum((bool(monitor_ids), approve_all, list_only))
    if chosen != 1:
        # Which of the three to give is a usage question (docs/cli.md): exit 2.
        raise click.UsageError(
            "monitor approve takes monitor ids, --all or --list (exactly one of them)"
        )
    if not list_only:
        refusal = approval_refusal(without_terminal)
        if refusal is not None:
            return report_error(f"monitor approve: {refusal}", as_json)
    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    registry = load_registry(warn)
    cache = DefinitionCache(registry)
    definitions = _with_watches(
        cache.load(workspace_path, monitors_path), cache, registry, workspace_path
    )
    ledger = ledger_path(workspace_path)
    if list_only:
        rows = _listing(definitions, cache, workspace_path)
        emit(
            {"workspacePath": workspace_path, "ledger": ledger, "monitors": rows},
            fmt,
            lambda: _listing_text(rows, ledger),
        )
        return 0

    waiting = {blocked.monitor.id: blocked for blocked in definitions.blocked}
    if approve_all:
        targets = list(waiting.values())
    else:
        problem = _unknown(monitor_ids, waiting, definitions)
        if problem is not None:
            return report_error(problem, as_json)
        targets = [waiting[monitor_id] for monitor_id in monitor_ids if monitor_id in waiting]
    if targets and not without_terminal and not _confirmed(targets):
        return report_error("monitor approve: nothing approved (not confirmed)", as_json)
    try:
        record_approvals(workspace_path, [blocked.requirement for blocked in targets])
    except OSError as error:
        return report_error(
            f"cannot record the approval in {ledger}: {error.strerror or error}", as_json
        )
    approved = [
        {
            "monitorId": blocked.monitor.id,
            "summary": blocked.requirement.summary(),
            "reach": blocked.requirement.reach,
            "hash": blocked.requirement.digest,
        }
        for blocked in targets
    ]
    runnable = {monitor.id: monitor for monitor in definitions.runnable}
    already = {
        monitor_id: (
            "is already approved"
            if cache.requirement_of(runnable[monitor_id], workspace_path) is not None
            else "runs nothing and reads nothing outside the project: it needs no approval"
        )
        for monitor_id in monitor_ids
        if monitor_id not in waiting
    }

    def text() -> str:
        if not approved and not already:
            return "No monitor waits for approval."
        lines = [f"Approved {row['monitorId']}: {row['summary']}" for row in approved]
        lines += [f"{monitor_id} {why}." for monitor_id, why in already.items()]
        if approved:
            lines.append("A running daemon runs them from its next tick.")
        return "\n".join(lines)

    emit(
        {"workspacePath": workspace_path, "ledger": ledger, "approved": approved},
        fmt,
        text,
    )
    return 0


def _unknown(
    monitor_ids: tuple[str, ...],
    waiting: dict[str, Any],
    definitions: Any,
) -> str | None:
    """Why one of ``monitor_ids`` cannot be approved, or None."""
    runnable = {monitor.id for monitor in definitions.runnable}
    invalid = {problem.monitor_id: problem.message for problem in definitions.problems}
    for monitor_id in monitor_ids:
        if monitor_id in waiting or monitor_id in runnable:
            continue
        if monitor_id in invalid:
            return (
                f'monitor "{monitor_id}" is invalid ({invalid[monitor_id]}); fix it '
                "(see `agentmonitors validate`) before approving it"
            )
        known = sorted(runnable | set(waiting))
        listing = f"known ids: {', '.join(known)}" if known else "the project defines no monitors"
        return f'Unknown monitor id "{monitor_id}" ({listing}).'
    return None


def _confirmed(targets: list[Any]) -> bool:
    """Shows what would be approved and asks the user at the terminal."""
    # What a repository wrote (argv, paths) is shown escaped: a bidi or invisible
    # character must not disguise what the user is asked to approve.
    for blocked in targets:
        click.echo(clean_line(f"{blocked.monitor.id} {blocked.requirement.summary()}"), err=True)
    noun = "this monitor" if len(targets) == 1 else f"these {len(targets)} monitors"
    return click.confirm(f"Approve {noun}?", default=False, err=True)


def _with_watches(definitions: Any, cache: Any, registry: Any, workspace: str) -> Any:
    """``definitions`` plus the active agent-declared watches of the workspace, read from
    its database without writing (a watch waits for approval like a MONITOR.md)."""

    db = open_read_only(resolve_db_path(workspace))
    if db is None:
        return definitions
    try:
        return EphemeralDefinitions(registry).merged(definitions, db, workspace, cache)
    finally:
        db.close()

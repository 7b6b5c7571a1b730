"""``agentmonitors daemon once``: one observation cycle in this process."""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.output import dump_json, format_option, report_error


def once_text(
    result: Any, now_ms: int, backing_off: dict[str, tuple[int, int]] | None = None
) -> str:
    """The summary line, the errored monitors, then those waiting out a backoff.

    ``backing_off`` maps a skipped monitor's id to (consecutive failures, retry at ms).
    """
    from agentmonitors.clock import ms_from_iso
    from agentmonitors.runtime.human import human_wait

    errored = result.errored_observations
    summary = (
        f"Evaluated {len(result.evaluated_monitors)} monitor(s), "
        f"emitted {len(result.emitted_event_ids)} event(s)"
        + (f", {len(errored)} errored:" if errored else ".")
    )
    waiting = [item for item in result.skipped_monitors if "nextDueAt" in item]
    if waiting:
        soonest = min((ms_from_iso(item["nextDueAt"]) or now_ms) - now_ms for item in waiting)
        summary += f" ({len(waiting)} not yet due — next due in {human_wait(soonest)})"
    lines = [summary] + [f"  {item['monitorId']}: {item['message']}" for item in errored]
    lines += [
        f"  {item['monitorId']}: {item['reason']} — the user runs"
        f" `agentmonitors monitor approve {item['monitorId']}` to let it run"
        for item in result.skipped_monitors
        if "reason" in item
    ]
    for monitor_id, (count, retry_at) in sorted((backing_off or {}).items()):
        lines.append(
            f"  {monitor_id}: backing off after {count} failure(s) in a row; next try in"
            f" {human_wait(retry_at - now_ms)} (--force tries it now)"
        )
    return "\n".join(lines)


def _once_problem(
    workspace: str | None, monitors_dir: str | None, workspace_path: str, monitors_path: str
) -> str | None:
    """Why ``daemon once`` cannot run with these arguments, or None."""
    from agentmonitors.monitor.parse import FOLDER_MONITOR_FILE
    from agentmonitors.workspace import user_monitors_dir

    if workspace is not None and not os.path.isdir(workspace_path):
        what = "is not a folder" if os.path.exists(workspace_path) else "does not exist"
        return f'--workspace "{workspace}" {what}.'
    if monitors_dir is None:
        user_dir = user_monitors_dir()
        if os.path.isdir(monitors_path) or (user_dir is not None and os.path.isdir(user_dir)):
            return None
        return (
            f'no monitors folder: "{monitors_path}" does not exist. Create a monitor with'
            " `agentmonitors init <name> --type <type>`."
        )
    if monitors_dir in _project_monitor_ids(workspace_path) and not _holds_monitor_folders(
        monitors_path
    ):
        # `daemon once docs` with a monitor "docs": often the project has a docs/
        # folder too, but one without monitor folders in it is not what was meant.
        return (
            f'"{monitors_dir}" is a monitor id, not a monitors folder. `daemon once` observes'
            " every due monitor of the project (run it without arguments); to try this one"
            f" alone, run `agentmonitors monitor test {monitors_dir}`."
        )
    if os.path.isdir(monitors_path):
        if os.path.isfile(os.path.join(monitors_path, FOLDER_MONITOR_FILE)):
            return (
                f'"{monitors_dir}" is one monitor\'s folder, not a folder of monitors.'
                " `daemon once` observes every due monitor of the project; to try this one"
                f" alone, run `agentmonitors monitor test {monitors_dir}`."
            )
        return None
    if os.path.isfile(monitors_path):
        return (
            f'"{monitors_dir}" is a file, not a monitors folder. To try one monitor, run'
            f" `agentmonitors monitor test {monitors_dir}`."
        )
    return f'monitors folder "{monitors_path}" does not exist.'


def _holds_monitor_folders(path: str) -> bool:
    """Whether ``path`` has ``<id>/MONITOR.md`` entries, as a monitors folder does."""
    from agentmonitors.monitor.parse import FOLDER_MONITOR_FILE

    try:
        entries = os.listdir(path)
    except OSError:
        return False
    return any(os.path.isfile(os.path.join(path, name, FOLDER_MONITOR_FILE)) for name in entries)


def _project_monitor_ids(workspace: str) -> set[str]:
    from agentmonitors.monitor.discovery import discover

    try:
        return {monitor.id for monitor in discover(workspace).monitors}
    except Exception:  # only for a friendlier message; never the reason to fail
        return set()


@click.command(
    "once",
    help=(
        "Run one observation cycle in this process (no socket). A monitor that failed"
        " waits out its backoff (5s after the first failure, doubling up to 5m) just as"
        " in a running daemon; --force observes it now. Editing a monitor's file ends"
        " its backoff."
    ),
)
@click.argument("monitors_dir", required=False)
@click.option("--workspace", help="Project directory (default: the current project).")
@click.option(
    "--force",
    is_flag=True,
    help="Observe monitors that are backing off after failures now, without waiting.",
)
@format_option(("text", "json"), "text")
def once(monitors_dir: str | None, workspace: str | None, force: bool, output_format: str) -> int:
    # Here, not at the top: every `daemon` subcommand imports this module.
    import asyncio

    from agentmonitors.cli.daemon import registry_with_warnings, workspace_and_monitors
    from agentmonitors.daemon.compose import workspace_runtime
    from agentmonitors.paths import resolve_db_path
    from agentmonitors.store.database import Database, StoreError

    as_json = output_format == "json"
    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    problem = _once_problem(workspace, monitors_dir, workspace_path, monitors_path)
    if problem is not None:
        return report_error(problem, as_json)
    try:
        with Database(resolve_db_path(workspace_path)) as db:
            runtime = workspace_runtime(
                db,
                workspace_path,
                registry_with_warnings(),
                monitors_dir=monitors_path,
                restore_backoff=not force,
            )
            result = asyncio.run(runtime.tick())
            now_ms = runtime.clock.now_ms()
    except StoreError as error:
        return report_error(str(error), as_json)
    if as_json:
        click.echo(dump_json(result.to_json()))
        return 0
    backing_off: dict[str, tuple[int, int]] = {}
    for item in result.skipped_monitors:
        count, retry_at, _ = runtime.failure_of(item["monitorId"])
        if count > 0 and retry_at > now_ms:
            backing_off[item["monitorId"]] = (count, retry_at)
    click.echo(once_text(result, now_ms, backing_off))
    return 0

"""``agentmonitors daemon once`` without click: one observation cycle in this process.

A scheduler (cron, a CI step, a loop in a script) may run ``daemon once`` every few
seconds over a large tree, so a plain invocation is run straight from the entry point
(:func:`run_quick`), without importing click; ``daemon/once.py`` holds the click
command (``--help``, completion, usage errors), which calls :func:`run_once` too.
Anything the quick parser does not fully understand goes to click, so its errors
read exactly as they always did.
"""

from __future__ import annotations

import os
import re
import sys

from agentmonitors.cli.output import echo, print_document, print_error, report_error, warn
from agentmonitors.clock import ms_from_iso
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.fastpath.argv import FLAG, VALUE, Spec, parse_plain
from agentmonitors.monitor.discovery import discover
from agentmonitors.monitor.parse import FOLDER_MONITOR_FILE
from agentmonitors.paths import resolve_db_path
from agentmonitors.sources.registry import load_registry
from agentmonitors.store.database import Database, StoreError
from agentmonitors.workspace import logical_cwd, resolve_workspace, user_monitors_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentmonitors.runtime.tick import TickResult
    from agentmonitors.sources.base import SourceRegistry

FORMATS = ("text", "json", "toon")
# The report is printed as ``click.echo`` printed it: colour codes (a failing
# command's stderr may carry them) are dropped unless stdout is a terminal.
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


def workspace_and_monitors(workspace_flag: str | None, monitors_dir: str | None) -> tuple[str, str]:
    """The workspace (absolute, not symlink-resolved) and the project monitors folder."""
    workspace = resolve_workspace(workspace_flag)
    if monitors_dir is None:
        return workspace, os.path.join(workspace, ".claude", "monitors")
    return workspace, os.path.normpath(os.path.join(logical_cwd(), monitors_dir))


def registry_with_warnings(workspace: str | None = None) -> SourceRegistry:
    """The bundled sources plus installed plugins; a skipped plugin is a warning.

    A distribution found inside ``workspace`` (or the current folder) is no plugin.
    """
    return load_registry(warn, workspace=workspace)


def once_text(
    result: TickResult, now_ms: int, backing_off: dict[str, tuple[int, int]] | None = None
) -> str:
    """The summary line, the errored monitors, then those waiting out a backoff.

    ``backing_off`` maps a skipped monitor's id to (consecutive failures, retry at ms).
    """
    # Lazy: a --format json report never words a wait; the text one alone needs it.
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
    try:
        entries = os.listdir(path)
    except OSError:
        return False
    return any(os.path.isfile(os.path.join(path, name, FOLDER_MONITOR_FILE)) for name in entries)


def _project_monitor_ids(workspace: str) -> set[str]:
    try:
        return {monitor.id for monitor in discover(workspace).monitors}
    except Exception:  # only for a friendlier message; never the reason to fail
        return set()


def run_once(
    monitors_dir: str | None, workspace: str | None, force: bool, output_format: str
) -> int:
    """One tick of every due monitor, reported as text or JSON; the exit code."""
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
                registry_with_warnings(workspace_path),
                monitors_dir=monitors_path,
                restore_backoff=not force,
            )
            # Without an event loop unless a due source needs one: asyncio alone
            # would be a sixth of the tick of an unchanged tree.
            result = runtime.tick_blocking()
            now_ms = runtime.clock.now_ms()
    except StoreError as error:
        return report_error(str(error), as_json)
    backing_off: dict[str, tuple[int, int]] = {}
    for item in result.skipped_monitors:
        count, retry_at, _ = runtime.failure_of(item["monitorId"])
        if count > 0 and retry_at > now_ms:
            backing_off[item["monitorId"]] = (count, retry_at)
    if not print_document(result.to_json(), output_format):
        text = once_text(result, now_ms, backing_off)
        echo(text if sys.stdout.isatty() else _ANSI.sub("", text))
    return _once_exit(result, backing_off)


def _once_exit(result: TickResult, backing_off: dict[str, tuple[int, int]]) -> int:
    """1 with one stderr line naming them when monitors are failing (docs/cli.md).

    Failing: an observation of this tick errored, or a monitor waits out the backoff of
    failures it has not recovered from. A monitor awaiting approval is not failing.
    """
    failing = sorted(
        {str(item["monitorId"]) for item in result.errored_observations} | set(backing_off)
    )
    if not failing:
        return 0
    return print_error(
        f"{len(failing)} monitor(s) failing: {', '.join(failing)} (the report says why;"
        " `agentmonitors monitor explain <id>` shows one)"
    )


# Kept equal to the click declaration by tests/fastpath/test_argv.py.
QUICK_OPTIONS: Spec = {
    "--force": ("force", FLAG, None),
    "--workspace": ("workspace", VALUE, None),
    "--format": ("output_format", VALUE, FORMATS),
}
QUICK_ARGUMENT = "monitors_dir"
_DEFAULTS = {"monitors_dir": None, "workspace": None, "force": False, "output_format": "text"}


def quick_parse(args: list[str]) -> dict[str, Any] | None:
    """``daemon once``'s arguments when they are plain, else None (click judges them).

    Plain: at most one monitors folder that does not start with ``-``, ``--force``,
    ``--workspace PATH`` and ``--format text|json|toon`` (or ``--opt=value``), each at most once.
    """
    return parse_plain(
        QUICK_OPTIONS, args, defaults=_DEFAULTS, positional=QUICK_ARGUMENT, once=True
    )


def run_quick(args: list[str]) -> int | None:
    """Run ``daemon once`` without click, or None when click must parse ``args``."""
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return None
    options = quick_parse(args)
    if options is None:
        return None
    try:
        return run_once(**options)
    except BrokenPipeError:
        return 1
    except (EOFError, KeyboardInterrupt):
        # As click reports an interrupted command.
        echo("", err=True)
        return print_error("aborted")

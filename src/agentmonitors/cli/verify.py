"""``agentmonitors verify [monitor]``: prove a monitor delivers, end to end."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from agentmonitors.catalog.definitions import DefinitionCache
from agentmonitors.cli.common_options import dir_option, workspace_option
from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.output import echo, format_option, print_document, print_error, report_error
from agentmonitors.cli.tick_once import registry_with_warnings, workspace_and_monitors
from agentmonitors.daemon.client import call, ping
from agentmonitors.diagnosis.verify import Interrupted, Trigger, Verifier, setup_failure
from agentmonitors.diagnosis.verify_budget import budget_for
from agentmonitors.diagnosis.verify_daemon import IsolatedDaemon, WorkspaceDaemon
from agentmonitors.diagnosis.verify_report import LiveProgress, progress_for, render_text
from agentmonitors.diagnosis.verify_trigger import TriggerError, auto_trigger
from agentmonitors.paths import resolve_socket_path
from agentmonitors.sources.permit import approve_command
from agentmonitors.workspace import read_local_state


@contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM unwind the run (so cleanup runs) instead of killing it."""
    interrupted: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        # Once only: a second Ctrl-C must not cut the cleanup the first one started.
        if not interrupted:
            interrupted.append(signum)
            raise Interrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _pick_monitor(definitions: Any, monitor_id: str | None) -> Any:
    """The monitor to verify, or a ``str`` saying why there is none."""
    runnable = {monitor.id: monitor for monitor in definitions.runnable}
    blocked = {item.monitor.id: item for item in definitions.blocked}
    problems = {problem.monitor_id: problem for problem in definitions.problems}
    known = sorted({*runnable, *blocked, *problems})
    if monitor_id is None:
        if len(known) != 1:
            listed = ", ".join(known) if known else "none found"
            return f"name the monitor to verify (monitors: {listed})"
        monitor_id = known[0]
    if monitor_id in runnable:
        return runnable[monitor_id]
    if monitor_id in blocked:
        return (
            f"monitor {monitor_id} is blocked: awaiting-approval; run "
            f"`{approve_command(monitor_id)}` first"
        )
    if monitor_id in problems:
        return f"monitor {monitor_id} is invalid: {problems[monitor_id].message}"
    return f"no monitor {monitor_id} (monitors: {', '.join(known) or 'none found'})"


@click.command(
    "verify",
    help="Prove a monitor delivers end to end: change, event, context. MONITOR_ID names the"
    " monitor; it may be left out only when the folder holds a single monitor.",
)
@click.argument("monitor_id", required=False, shell_complete=complete_monitor_id)
@dir_option
@workspace_option
@click.option("--trigger-cmd", help="Shell command that makes the change (run after baseline).")
@click.option("--manual", is_flag=True, help="Wait for you to make the change yourself.")
@click.option(
    "--timeout-ms", type=click.IntRange(min=1), help="Hard cap on everything after the trigger."
)
@click.option(
    "--use-workspace-daemon",
    is_flag=True,
    help="Use (or start) the workspace's daemon and leave it running.",
)
@format_option(("text", "json", "toon"), "text")
def command(
    monitor_id: str | None,
    monitors_dir: str | None,
    workspace: str | None,
    trigger_cmd: str | None,
    manual: bool,
    timeout_ms: int | None,
    use_workspace_daemon: bool,
    output_format: str,
) -> int:
    as_json = output_format == "json"
    if trigger_cmd is not None and manual:
        raise click.UsageError("--trigger-cmd and --manual cannot be used together")
    if trigger_cmd is not None and not trigger_cmd.strip():
        raise click.UsageError("--trigger-cmd must not be empty")

    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    if not os.path.isdir(workspace_path):
        return report_error(f"workspace {workspace_path} is not a folder", as_json)
    registry = registry_with_warnings(workspace_path)
    picked = _pick_monitor(
        DefinitionCache(registry).load(workspace_path, monitors_path), monitor_id
    )
    if isinstance(picked, str):
        return _finish(setup_failure(monitor_id or "", "setup", picked), output_format)
    trigger = Trigger(command=trigger_cmd)
    if trigger_cmd is None and not manual:
        try:
            trigger.file = auto_trigger(picked, workspace_path, registry)
        except TriggerError as error:
            return _finish(setup_failure(picked.id, error.kind, str(error)), output_format)
    daemon = _daemon_for(workspace_path, monitors_path, use_workspace_daemon, picked.id)
    if isinstance(daemon, str):
        return _finish(setup_failure(picked.id, "setup", daemon), output_format)
    progress = progress_for(picked.id)
    verifier = Verifier(
        monitor=picked,
        budget=budget_for(picked, registry),
        workspace=workspace_path,
        daemon=daemon,
        trigger=trigger,
        call=call,
        ping=ping,
        timeout_ms=timeout_ms,
        bystander_socket=None
        if use_workspace_daemon
        else _running_workspace_daemon(workspace_path),
        progress=progress,
    )
    try:
        with _interruptible():
            result = verifier.run()
    finally:
        if isinstance(progress, LiveProgress):
            progress.close()
    return _finish(result, output_format)


def _daemon_for(
    workspace: str, monitors_dir: str, use_workspace_daemon: bool, monitor_id: str
) -> Any:
    """The daemon of the run, or a ``str`` saying why the workspace's cannot be used.

    The throwaway daemon runs ``monitor_id`` alone; the workspace's runs them all, as
    it does for its sessions.
    """

    if not use_workspace_daemon:
        return IsolatedDaemon(workspace, monitors_dir, monitor_id)

    if not read_local_state(workspace).enabled:
        return (
            f"monitoring is disabled for {workspace}: --use-workspace-daemon needs an enabled "
            "workspace (run `agentmonitors init`), or drop the flag to use a throwaway daemon"
        )
    return WorkspaceDaemon(workspace, monitors_dir, resolve_socket_path(workspace))


def _running_workspace_daemon(workspace: str) -> str | None:
    """The socket of the workspace's own daemon when it runs: it sees the trigger too."""
    if not read_local_state(workspace).enabled:
        return None
    socket = resolve_socket_path(workspace)
    return socket if ping(socket) else None


def _finish(result: Any, output_format: str) -> int:
    if not print_document(result.to_json(), output_format):
        echo(render_text(result))
    if result.ok:
        return 0
    failure = result.failure
    reason = "it did not deliver" if failure is None else f"{failure.kind}: {failure.message}"
    return print_error(f"verify {result.monitor_id or '(no monitor)'} failed at {reason}")

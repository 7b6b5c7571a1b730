"""``agentmonitors daemon``: run, start, stop and inspect the per-workspace daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from typing import Any

import click

from agentmonitors.cli.output import dump_json, format_option, report_error
from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE
from agentmonitors.workspace import logical_cwd, resolve_workspace

DETACH_WAIT_S = 15.0
KILL_GRACE_S = 3.0


def workspace_and_monitors(workspace_flag: str | None, monitors_dir: str | None) -> tuple[str, str]:
    """The workspace (absolute, not symlink-resolved) and the project monitors folder."""
    workspace = resolve_workspace(workspace_flag)
    if monitors_dir is None:
        return workspace, os.path.join(workspace, ".claude", "monitors")
    return workspace, os.path.normpath(os.path.join(logical_cwd(), monitors_dir))


def _registry() -> Any:
    """The bundled sources plus installed plugins; a skipped plugin is a warning."""
    from agentmonitors.cli.output import warn
    from agentmonitors.sources.registry import load_registry

    return load_registry(warn)


@click.group("daemon", help="The per-workspace daemon that runs monitors.")
def command() -> None:
    pass


# --------------------------------------------------------------------------- once


def once_text(result: Any, now_ms: int) -> str:
    from agentmonitors.runtime.clock import ms_from_iso

    errored = result.errored_observations
    summary = (
        f"Evaluated {len(result.evaluated_monitors)} monitor(s), "
        f"emitted {len(result.emitted_event_ids)} event(s)"
        + (f", {len(errored)} errored:" if errored else ".")
    )
    if result.skipped_monitors:
        soonest = min(
            (ms_from_iso(item["nextDueAt"]) or now_ms) - now_ms for item in result.skipped_monitors
        )
        seconds = max(0, -(-soonest // 1000))
        summary += f" ({len(result.skipped_monitors)} not yet due — next due in {seconds}s)"
    lines = [summary] + [f"  {item['monitorId']}: {item['message']}" for item in errored]
    return "\n".join(lines)


@command.command("once", help="Run one observation cycle in this process (no socket).")
@click.argument("monitors_dir", required=False)
@click.option("--workspace", help="Project directory (default: the current project).")
@format_option(("text", "json"), "text")
def once(monitors_dir: str | None, workspace: str | None, output_format: str) -> int:
    from agentmonitors.paths import resolve_db_path
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.store.database import Database, StoreError

    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    try:
        with Database(resolve_db_path(workspace_path)) as db:
            runtime = Runtime(db, workspace_path, _registry(), monitors_dir=monitors_path)
            result = asyncio.run(runtime.tick())
            now_ms = runtime.clock.now_ms()
    except StoreError as error:
        return report_error(str(error), output_format == "json")
    if output_format == "json":
        click.echo(dump_json(result.to_json()))
    else:
        click.echo(once_text(result, now_ms))
    return 0


# --------------------------------------------------------------------------- run / start


def _daemon_options(
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    poll_ms: int,
    reap_after_ms: int,
) -> Any:
    from agentmonitors.daemon.app import DaemonOptions
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    socket_path = resolve_socket_path(
        workspace_path, socket, warn=lambda text: click.echo(text, err=True)
    )
    return DaemonOptions(
        workspace=workspace_path,
        monitors_dir=monitors_path,
        socket_path=socket_path,
        db_path=resolve_db_path(workspace_path),
        poll_ms=poll_ms,
        reap_after_ms=reap_after_ms,
    )


def _run_options(function: Any) -> Any:
    function = click.argument("monitors_dir", required=False)(function)
    function = click.option(
        "--workspace", help="Project directory (default: the current project)."
    )(function)
    function = click.option(
        "--poll-ms",
        type=int,
        default=30_000,
        show_default=True,
        help="Milliseconds between ticks (file changes wake the daemon sooner).",
    )(function)
    function = click.option("--socket", help="Unix socket to listen on.")(function)
    function = click.option(
        "--reap-after-ms",
        type=int,
        default=300_000,
        show_default=True,
        help="Stop after this long with no active session (0 = never).",
    )(function)
    return click.option("--log", "log_path", help="Log file for a detached daemon.")(function)


def _check_numbers(poll_ms: int, reap_after_ms: int) -> str | None:
    if poll_ms <= 0:
        return "--poll-ms must be a positive number."
    if reap_after_ms < 0:
        return "--reap-after-ms must be zero or a positive number."
    return None


@command.command("run", help="Run the daemon in the foreground (or --detach it).")
@_run_options
@click.option("--detach", is_flag=True, help="Start in the background and return.")
def run(
    monitors_dir: str | None,
    workspace: str | None,
    poll_ms: int,
    socket: str | None,
    reap_after_ms: int,
    log_path: str | None,
    detach: bool,
) -> int:
    problem = _check_numbers(poll_ms, reap_after_ms)
    if problem is None and log_path is not None and not detach:
        problem = "--log requires --detach."
    if problem is not None:
        return report_error(problem, False)
    options = _daemon_options(monitors_dir, workspace, socket, poll_ms, reap_after_ms)
    if detach:
        return _detach(options, log_path)
    return _foreground(options)


@command.command("start", help="Start the daemon in the background (same as run --detach).")
@_run_options
def start(
    monitors_dir: str | None,
    workspace: str | None,
    poll_ms: int,
    socket: str | None,
    reap_after_ms: int,
    log_path: str | None,
) -> int:
    problem = _check_numbers(poll_ms, reap_after_ms)
    if problem is not None:
        return report_error(problem, False)
    return _detach(
        _daemon_options(monitors_dir, workspace, socket, poll_ms, reap_after_ms), log_path
    )


def _already_running(socket_path: str) -> str:
    return f"AgentMon daemon is already running at {socket_path}."


def _foreground(options: Any) -> int:
    import logging

    from agentmonitors.daemon.app import Daemon
    from agentmonitors.daemon.client import ping
    from agentmonitors.daemon.server import DaemonAlreadyRunning
    from agentmonitors.store.database import StoreError

    if ping(options.socket_path):
        return report_error(_already_running(options.socket_path), False)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s: %(message)s"
    )

    def out(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    try:
        daemon = Daemon(options, _registry(), out=out)
        return asyncio.run(daemon.run())
    except DaemonAlreadyRunning:
        return report_error(_already_running(options.socket_path), False)
    except (StoreError, OSError) as error:
        return report_error(str(error), False)


def _detach(options: Any, log_path: str | None) -> int:
    from agentmonitors.daemon.client import DaemonError, call, ping
    from agentmonitors.paths import workspace_log_path

    if ping(options.socket_path):
        return report_error(_already_running(options.socket_path), False)
    log_file = os.path.abspath(log_path) if log_path else workspace_log_path(options.workspace)
    argv = [
        str(options.monitors_dir),
        "--workspace",
        options.workspace,
        "--socket",
        options.socket_path,
        "--poll-ms",
        str(options.poll_ms),
        "--reap-after-ms",
        str(options.reap_after_ms),
    ]
    from agentmonitors.daemon.spawn import spawn_daemon

    pid = spawn_daemon(argv, {**os.environ, "AGENTMONITORS_DB": options.db_path}, log_file)
    deadline = time.monotonic() + DETACH_WAIT_S
    failure = f"Daemon failed to start within {int(DETACH_WAIT_S)}s; see {log_file}"
    while time.monotonic() < deadline:
        exited, status_code = os.waitpid(pid, os.WNOHANG)
        if exited:
            code = os.waitstatus_to_exitcode(status_code)
            failure = f"Daemon exited with code {code} while starting; see {log_file}"
            break
        if ping(options.socket_path, timeout_s=0.3):
            try:
                status = call(options.socket_path, "status", {})
            except DaemonError as error:
                failure = f"Daemon answered but its status failed: {error}"
                break
            if isinstance(status, dict) and status.get("pid") == pid:
                click.echo("AgentMon daemon started in the background.")
                click.echo(f"  Pid: {pid}")
                click.echo(f"  Socket: {options.socket_path}")
                click.echo(f"  Log: {log_file}")
                click.echo(f"  Reaping: {_reaping_text(options.reap_after_ms)}")
                return 0
            failure = (
                f"Another process (pid {status.get('pid') if isinstance(status, dict) else '?'})"
                f" answers at {options.socket_path}; the started daemon was not confirmed"
            )
            break
        time.sleep(0.1)
    _kill(pid)
    return report_error(failure, False)


def _kill(pid: int) -> None:
    """Stop a daemon this command started and could not confirm: TERM, then KILL."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _reaping_text(reap_after_ms: int | None) -> str:
    if reap_after_ms is None:
        return "unknown"
    if reap_after_ms <= 0:
        return "disabled"
    return f"stops after {reap_after_ms // 1000}s idle"


# --------------------------------------------------------------------------- stop / status


@command.command("stop", help="Ask the workspace's daemon to stop.")
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory (default: the current project).")
def stop(socket: str | None, workspace: str | None) -> int:
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call, ping
    from agentmonitors.paths import resolve_socket_path

    socket_path = resolve_socket_path(resolve_workspace(workspace), socket)
    try:
        call(socket_path, "stop", {})
    except DaemonConnectionError:
        click.echo(NO_DAEMON_MESSAGE, err=True)
        return 1
    except DaemonError as error:
        return report_error(str(error), False)
    click.echo("AgentMon daemon stopping.")
    # Wait briefly so a following `daemon start` does not race the old process.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and ping(socket_path, timeout_s=0.2):
        time.sleep(0.05)
    return 0


@command.command("status", help="Whether the daemon runs, and what it holds.")
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory (default: the current project).")
@format_option(("text", "json"), "text")
def status(socket: str | None, workspace: str | None, output_format: str) -> int:
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

    workspace_path = resolve_workspace(workspace)
    socket_path = resolve_socket_path(workspace_path, socket)
    report: dict[str, Any]
    try:
        live = call(socket_path, "status", {})
        report = {"running": True, "socketPath": socket_path, **(live or {})}
    except DaemonConnectionError:
        report = {
            "running": False,
            "socketPath": socket_path,
            **_offline_counts(resolve_db_path(workspace_path)),
        }
    except DaemonError as error:
        return report_error(str(error), output_format == "json")
    if output_format == "json":
        click.echo(dump_json(report))
        return 0
    lines = [
        f"Daemon running: {'yes' if report['running'] else 'no'}",
        f"Socket: {socket_path}",
    ]
    if report.get("pid") is not None:
        lines.append(f"Pid: {report['pid']}")
    if report.get("uptimeMs") is not None:
        lines.append(f"Uptime: {_duration(int(report['uptimeMs']))}")
    lines += [
        f"Sessions: {report['sessions']}",
        f"Active sessions: {report['activeSessions']}",
        f"Dormant sessions: {report['dormantSessions']}",
        f"Events: {report['events']}",
    ]
    if report["running"]:
        lines.append(f"Reaping: {_reaping_text(report.get('reapAfterMs'))}")
    click.echo("\n".join(lines))
    return 0


def _offline_counts(db_path: str) -> dict[str, int]:
    """Counts read straight from the database, without creating one that isn't there."""
    from agentmonitors.store import queries
    from agentmonitors.store.database import Database, StoreError, is_memory

    empty = {"sessions": 0, "activeSessions": 0, "dormantSessions": 0, "events": 0}
    if is_memory(db_path) or not os.path.exists(db_path):
        return empty
    try:
        with Database(db_path) as db:
            counts = queries.session_counts(db)
            events = queries.count_rows(db, "monitor_events")
    except StoreError:
        return empty
    return {
        "sessions": counts["total"],
        "activeSessions": counts["active"],
        "dormantSessions": counts["dormant"],
        "events": events,
    }


def _duration(ms: int) -> str:
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m"

"""``agentmonitors daemon``: run, start, stop and inspect the per-workspace daemon."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Any

import click

from agentmonitors.cli import tick_once
from agentmonitors.cli.daemon_once import once
from agentmonitors.cli.output import format_option, print_document, report_error
from agentmonitors.runtime.human import human_duration
from agentmonitors.workspace import (
    DEFAULT_POLL_MS,
    DEFAULT_REAP_AFTER_MS,
    resolve_workspace,
)

# Other commands import these from here; they live beside ``daemon once``, which
# runs without click.
workspace_and_monitors = tick_once.workspace_and_monitors
registry_with_warnings = tick_once.registry_with_warnings

DETACH_WAIT_S = 15.0
KILL_GRACE_S = 3.0


@click.group("daemon", help="The per-workspace daemon that runs monitors.")
def command() -> None:
    pass


command.add_command(once)


# --------------------------------------------------------------------------- run / start


def _daemon_options(
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    poll_ms: int,
    reap_after_ms: int,
    boot_session: str | None = None,
    only_monitor: str | None = None,
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
        boot_session=_boot_session(boot_session),
        only_monitor=only_monitor or None,
    )


def _boot_session(value: str | None) -> tuple[str, str] | None:
    """``ADAPTER:HOST_SESSION_ID`` as a pair; adapter names hold no colon."""
    if not value:
        return None
    adapter, _, host_session_id = value.partition(":")
    return (adapter, host_session_id) if adapter and host_session_id else None


def _run_options(function: Any) -> Any:
    function = click.argument("monitors_dir", required=False, metavar="[DIR]")(function)
    function = click.option(
        "--workspace", help="Project directory (default: the current project)."
    )(function)
    function = click.option(
        "--poll-ms",
        type=int,
        default=DEFAULT_POLL_MS,
        show_default=True,
        help="Milliseconds between ticks (file changes wake the daemon sooner).",
    )(function)
    function = click.option("--socket", help="Unix socket to listen on.")(function)
    function = click.option(
        "--reap-after-ms",
        type=int,
        default=DEFAULT_REAP_AFTER_MS,
        show_default=True,
        help="Stop after this long with no active session (0 = never).",
    )(function)
    return click.option(
        "--log",
        "log_path",
        help="Log file (default for a background daemon: <workspace data dir>/daemon.log);"
        " moved to <log>.1 past $AGENTMONITORS_LOG_MAX_BYTES (5 MiB).",
    )(function)


def _check_numbers(poll_ms: int, reap_after_ms: int) -> str | None:
    if poll_ms <= 0:
        return "--poll-ms must be a positive number."
    if reap_after_ms < 0:
        return "--reap-after-ms must be zero or a positive number."
    return None


@command.command(
    "run",
    help="Run the daemon in the foreground (or --detach it) over the monitors in DIR"
    " (default: <project>/.claude/monitors).",
)
@_run_options
@click.option("--detach", is_flag=True, help="Start in the background and return.")
# Set by `session start` when it boots the daemon: that session is registered before
# the first tick (transports/session_hooks.py).
@click.option("--boot-session", hidden=True)
# Set by `verify`'s throwaway daemon: the one monitor it observes.
@click.option("--only-monitor", hidden=True)
def run(
    monitors_dir: str | None,
    workspace: str | None,
    poll_ms: int,
    socket: str | None,
    reap_after_ms: int,
    log_path: str | None,
    detach: bool,
    boot_session: str | None,
    only_monitor: str | None,
) -> int:
    if not detach and log_path is None:
        # Output to a file is dated from its very first line, a bad flag's error too.
        from agentmonitors.daemon.logstamp import stamp_when_logging_to_a_file

        stamp_when_logging_to_a_file()
    problem = _check_numbers(poll_ms, reap_after_ms)
    if problem is not None:
        return report_error(problem, False)
    if detach:
        options = _daemon_options(monitors_dir, workspace, socket, poll_ms, reap_after_ms)
        return _detach(options, log_path)
    # Everything the daemon prints goes through its log from here on: dated, bounded,
    # scrubbed (docs/architecture.md, "The daemon's log").
    from agentmonitors.daemon.logfile import setup_daemon_log

    try:
        log = setup_daemon_log(os.path.abspath(log_path) if log_path else None)
    except OSError as error:
        return report_error(f"cannot open the log {log_path}: {error}", False)
    options = _daemon_options(
        monitors_dir, workspace, socket, poll_ms, reap_after_ms, boot_session, only_monitor
    )
    return _foreground(options, log)


@command.command(
    "start",
    help="Start the daemon in the background (same as run --detach) over the monitors in DIR"
    " (default: <project>/.claude/monitors).",
)
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


def _foreground(options: Any, log: Any) -> int:
    import asyncio

    from agentmonitors.daemon.app import Daemon
    from agentmonitors.daemon.client import ping
    from agentmonitors.daemon.server import DaemonAlreadyRunning
    from agentmonitors.store.database import StoreError

    if ping(options.socket_path):
        return report_error(_already_running(options.socket_path), False)
    in_use = _database_in_use(options)
    if in_use is not None:
        return report_error(in_use, False)

    async def serve(daemon: Daemon) -> int:
        upkeep = asyncio.create_task(log.maintain())
        try:
            return await daemon.run()
        finally:
            upkeep.cancel()

    try:
        daemon = Daemon(options, registry_with_warnings(options.workspace), out=log.out)
        return asyncio.run(serve(daemon))
    except DaemonAlreadyRunning as error:
        # This socket's, or (DatabaseInUse) the one serving the same database.
        return report_error(str(error), False)
    except (StoreError, OSError) as error:
        return report_error(str(error), False)
    finally:
        log.close()


def _database_in_use(options: Any) -> str | None:
    """The refusal when a daemon on another socket already serves this database.

    A courtesy before starting: the daemon's own database lock is what decides.
    """
    from agentmonitors.daemon.client import ping
    from agentmonitors.daemon.db_lock import DatabaseInUse, holder_socket

    holder = holder_socket(options.db_path)
    if holder is None or holder == options.socket_path or not ping(holder):
        return None
    return str(DatabaseInUse(options.db_path, holder))


def _not_enabled(workspace: str) -> str:
    return (
        f'"{workspace}" is not an enabled project, so no daemon is started for it. Run'
        " `agentmonitors init --enable-only` in the project root first (or pass --workspace"
        " <project root>)."
    )


def _report_running(socket_path: str) -> int:
    """A background start that finds a daemon already serving: the goal is met."""
    from agentmonitors.daemon.client import DaemonError, call

    try:
        status = call(socket_path, "status", {})
    except DaemonError:
        status = None
    pid = status.get("pid") if isinstance(status, dict) else None
    click.echo("AgentMon daemon is already running.")
    if pid is not None:
        click.echo(f"  Pid: {pid}")
    click.echo(f"  Socket: {socket_path}")
    return 0


def _detach(options: Any, log_path: str | None) -> int:
    from agentmonitors.daemon.client import DaemonError, call, ping
    from agentmonitors.paths import MEMORY_DB, fit_socket_path, neutral_cwd, workspace_log_path
    from agentmonitors.workspace import read_local_state

    # Outside an enabled project the workspace is just the current folder: a daemon
    # there would run whatever monitors it holds on a socket other projects share.
    if not read_local_state(options.workspace).enabled:
        return report_error(_not_enabled(options.workspace), False)
    if ping(options.socket_path):
        return _report_running(options.socket_path)
    in_use = _database_in_use(options)
    if in_use is not None:
        return report_error(in_use, False)
    log_file = os.path.abspath(log_path) if log_path else workspace_log_path(options.workspace)
    # The daemon runs in a folder of ours, not here: every path it gets is absolute.
    socket_path = fit_socket_path(os.path.abspath(options.socket_path))
    db_path = options.db_path if options.db_path == MEMORY_DB else os.path.abspath(options.db_path)
    argv = [
        os.path.abspath(str(options.monitors_dir)),
        "--workspace",
        options.workspace,
        "--socket",
        socket_path,
        "--poll-ms",
        str(options.poll_ms),
        "--reap-after-ms",
        str(options.reap_after_ms),
    ]
    from agentmonitors.daemon.spawn import spawn_daemon

    env = {**os.environ, "AGENTMONITORS_DB": db_path}
    pid = spawn_daemon(argv, env, log_file, neutral_cwd(options.workspace))
    deadline = time.monotonic() + DETACH_WAIT_S
    failure = (
        f"Daemon failed to start within {human_duration(DETACH_WAIT_S * 1000)}; see {log_file}"
    )
    while time.monotonic() < deadline:
        exited, status_code = os.waitpid(pid, os.WNOHANG)
        if exited:
            code = os.waitstatus_to_exitcode(status_code)
            failure = f"Daemon exited with code {code} while starting; see {log_file}"
            break
        if ping(socket_path, timeout_s=0.3):
            try:
                status = call(socket_path, "status", {})
            except DaemonError as error:
                failure = f"Daemon answered but its status failed: {error}"
                break
            if isinstance(status, dict) and status.get("pid") == pid:
                click.echo("AgentMon daemon started in the background.")
                click.echo(f"  Pid: {pid}")
                click.echo(f"  Socket: {socket_path}")
                click.echo(f"  Log: {log_file}")
                click.echo(f"  Reaping: {_reaping_text(options.reap_after_ms)}")
                return 0
            failure = (
                f"Another process (pid {status.get('pid') if isinstance(status, dict) else '?'})"
                f" answers at {socket_path}; the started daemon was not confirmed"
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
    return f"stops after {human_duration(reap_after_ms)} idle"


# --------------------------------------------------------------------------- stop / status


@command.command("stop", help="Ask the workspace's daemon to stop.")
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory (default: the current project).")
@format_option(("text", "json", "toon"), "text")
def stop(socket: str | None, workspace: str | None, output_format: str) -> int:
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call, ping
    from agentmonitors.paths import resolve_socket_path

    as_json = output_format == "json"
    socket_path = resolve_socket_path(resolve_workspace(workspace), socket)
    try:
        answer = call(socket_path, "stop", {})
    except DaemonConnectionError as error:
        from agentmonitors.cli.daemon_calls import unreachable_text
        from agentmonitors.daemon.client import DaemonRefusedError
        from agentmonitors.daemon.protocol import REQUEST_TIMEOUT_S

        if isinstance(error, DaemonRefusedError):
            said = error.message
        elif error.timed_out:
            said = unreachable_text(socket_path, "stop", REQUEST_TIMEOUT_S)
        else:
            from agentmonitors.cli.daemon_calls import no_daemon_text

            said = no_daemon_text(workspace)
        click.echo(f"error: {said}", err=True)
        print_document({"stopped": False, "pid": None, "socketPath": socket_path}, output_format)
        return 1
    except DaemonError as error:
        return report_error(str(error), as_json)
    pid = answer.get("pid") if isinstance(answer, dict) else None
    if not print_document({"stopped": True, "pid": pid, "socketPath": socket_path}, output_format):
        click.echo("AgentMon daemon stopping.")
    # Wait briefly so a following `daemon start` does not race the old process.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and ping(socket_path, timeout_s=0.2):
        time.sleep(0.05)
    return 0


@command.command("status", help="Whether the daemon runs, and what it holds.")
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory (default: the current project).")
@format_option(("text", "json", "toon"), "text")
def status(socket: str | None, workspace: str | None, output_format: str) -> int:
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

    workspace_path = resolve_workspace(workspace)
    socket_path = resolve_socket_path(workspace_path, socket)
    report: dict[str, Any]
    try:
        live = call(socket_path, "status", {})
        report = {"running": True, "socketPath": socket_path, **(live or {})}
    except DaemonConnectionError as error:
        from agentmonitors.daemon.client import DaemonRefusedError

        if isinstance(error, DaemonRefusedError):
            click.echo(f"error: {error.message}", err=True)
        report = {
            "running": False,
            "socketPath": socket_path,
            **_offline_counts(resolve_db_path(workspace_path)),
        }
    except DaemonError as error:
        return report_error(str(error), output_format == "json")
    if print_document(report, output_format):
        return 0
    lines = [
        f"Daemon running: {'yes' if report['running'] else 'no'}",
        f"Socket: {socket_path}",
    ]
    if report.get("pid") is not None:
        lines.append(f"Pid: {report['pid']}")
    if report.get("uptimeMs") is not None:
        lines.append(f"Uptime: {human_duration(int(report['uptimeMs']))}")
    lines += [
        f"Sessions: {report['sessions']}",
        f"Active sessions: {report['activeSessions']}",
        f"Dormant sessions: {report['dormantSessions']}",
        f"Events: {report['events']}",
    ]
    if report["running"]:
        lines.append(f"Reaping: {_reaping_text(report.get('reapAfterMs'))}")
    database = report.get("database")
    reopened = database.get("reopened") if isinstance(database, dict) else None
    if isinstance(database, dict) and isinstance(reopened, dict):
        lines.append(
            f"Database: {database.get('path')} was {reopened.get('reason')} while the daemon ran;"
            f" reopened at {reopened.get('at')} ({reopened.get('sessionsKept', 0)} session(s)"
            " carried over, events stored before are gone)"
        )
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

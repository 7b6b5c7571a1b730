"""``agentmonitors daemon run``: the daemon in the foreground, or started in the background.

``daemon start`` (``start.py``) is ``run --detach``: it shares the options and the
detached start kept here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from typing import Any

import click

from agentmonitors.cli.common_options import workspace_option
from agentmonitors.cli.daemon.reaping import reaping_text
from agentmonitors.cli.output import report_error
from agentmonitors.cli.tick_once import registry_with_warnings, workspace_and_monitors
from agentmonitors.daemon.app import Daemon, DaemonOptions
from agentmonitors.daemon.client import DaemonError, call, ping
from agentmonitors.daemon.db_lock import DatabaseInUse, holder_socket
from agentmonitors.daemon.logfile import setup_daemon_log
from agentmonitors.daemon.logstamp import stamp_when_logging_to_a_file
from agentmonitors.daemon.server import DaemonAlreadyRunning
from agentmonitors.daemon.spawn import spawn_daemon
from agentmonitors.paths import (
    MEMORY_DB,
    fit_socket_path,
    neutral_cwd,
    resolve_db_path,
    resolve_socket_path,
    workspace_log_path,
)
from agentmonitors.runtime.human import human_duration
from agentmonitors.store.database import StoreError
from agentmonitors.workspace import DEFAULT_POLL_MS, DEFAULT_REAP_AFTER_MS, read_local_state

DETACH_WAIT_S = 15.0
KILL_GRACE_S = 3.0


def daemon_options(
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    poll_ms: int,
    reap_after_ms: int,
    boot_session: str | None = None,
    only_monitor: str | None = None,
) -> DaemonOptions:
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


def run_options(function: Any) -> Any:
    function = click.argument("monitors_dir", required=False, metavar="[DIR]")(function)
    function = workspace_option(function)
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


def check_numbers(poll_ms: int, reap_after_ms: int) -> str | None:
    if poll_ms <= 0:
        return "--poll-ms must be a positive number."
    if reap_after_ms < 0:
        return "--reap-after-ms must be zero or a positive number."
    return None


@click.command(
    "run",
    help="Run the daemon in the foreground (or --detach it) over the monitors in DIR"
    " (default: <project>/.claude/monitors).",
)
@run_options
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
        stamp_when_logging_to_a_file()
    problem = check_numbers(poll_ms, reap_after_ms)
    if problem is not None:
        return report_error(problem, False)
    if detach:
        options = daemon_options(monitors_dir, workspace, socket, poll_ms, reap_after_ms)
        return start_detached(options, log_path)
    # Everything the daemon prints goes through its log from here on: dated, bounded,
    # scrubbed (docs/architecture.md, "The daemon's log").
    try:
        log = setup_daemon_log(os.path.abspath(log_path) if log_path else None)
    except OSError as error:
        return report_error(f"cannot open the log {log_path}: {error}", False)
    options = daemon_options(
        monitors_dir, workspace, socket, poll_ms, reap_after_ms, boot_session, only_monitor
    )
    return _foreground(options, log)


def _already_running(socket_path: str) -> str:
    return f"AgentMon daemon is already running at {socket_path}."


def _foreground(options: DaemonOptions, log: Any) -> int:
    if ping(options.socket_path):
        return report_error(_already_running(options.socket_path), False)
    in_use = _database_in_use(options)
    if in_use is not None:
        return report_error(in_use, False)

    async def serve(daemon: Daemon) -> int:
        upkeep = asyncio.create_task(log.maintain())
        # Raw writes to the log's descriptor are measured when the daemon wakes anyway.
        daemon.runtime.after_tick.append(lambda _definitions, _result: log.check_size())
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


def _database_in_use(options: DaemonOptions) -> str | None:
    """The refusal when a daemon on another socket already serves this database.

    A courtesy before starting: the daemon's own database lock is what decides.
    """

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


def start_detached(options: DaemonOptions, log_path: str | None) -> int:
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
                click.echo(f"  Reaping: {reaping_text(options.reap_after_ms)}")
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

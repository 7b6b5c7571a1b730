"""``agentmonitors monitor``: look into one monitor's history and delivery path."""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.output import (
    dump_json,
    emit,
    format_option,
    report_error,
    resolve_format,
    warn,
)
from agentmonitors.workspace import read_local_state, resolve_workspace

OFFLINE_NOTICE = "No daemon running — showing persisted state from the last tick."


@click.group("monitor", help="Inspect one monitor.")
def command() -> None:
    pass


def _nothing_persisted(workspace: str, socket_path: str) -> str:
    """What to do when neither a daemon nor the database has anything to show."""
    if read_local_state(workspace).enabled:
        head = "No daemon running for this workspace and no persisted state to show."
        hint = ""
    else:
        head = "No daemon running at the default socket and no persisted state to show."
        hint = (
            " This workspace is not enabled: run `agentmonitors init --enable-only` so a"
            " Claude Code session starts its daemon."
        )
    return (
        f"{head}{hint} Start one with `agentmonitors daemon run` (or pass --socket <path> if it"
        f" listens elsewhere than {socket_path}), or try a monitor once with"
        " `agentmonitors monitor test <path>`."
    )


def ask_daemon(socket_path: str, method: str, params: dict[str, Any]) -> Any:
    """The daemon's answer, or None when no daemon answers (the caller reads the store).

    Any other failure (an application error, an older daemon) is raised.
    """
    from agentmonitors.daemon.client import DaemonConnectionError, call

    try:
        return call(socket_path, method, params)
    except DaemonConnectionError:
        return None


def _open_existing(db_path: str) -> Any:
    """The workspace database if it exists; never creates one just to find it empty."""
    from agentmonitors.store.database import Database, is_memory

    if is_memory(db_path) or not os.path.exists(db_path):
        return None
    return Database(db_path)


# --------------------------------------------------------------------------- history


def history_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No observation history."
    return "\n".join(
        f"{row['createdAt']}  {row['result']:<10}  {row['monitorId']}  ({row['sourceName']})"
        for row in rows
    )


@command.command("history", help="Recent observations of one monitor (or all), newest first.")
@click.argument("monitor_id", required=False)
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--workspace", help="Project directory; when given, also filters the rows.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--dir", "dir_", hidden=True)
@format_option(("toon", "json", "text"), None)
def history(
    monitor_id: str | None,
    socket: str | None,
    workspace: str | None,
    limit: int,
    dir_: str | None,
    output_format: str | None,
) -> int:
    from agentmonitors.daemon.client import DaemonError
    from agentmonitors.paths import resolve_db_path, resolve_socket_path

    fmt = resolve_format(output_format)
    if dir_ is not None:
        click.echo(
            "error: no such option: --dir. monitor history scopes by --workspace "
            "(the project directory), not --dir.",
            err=True,
        )
        return 1
    workspace_path = resolve_workspace(workspace)
    socket_path = resolve_socket_path(workspace_path, socket)
    params: dict[str, Any] = {"limit": limit}
    if monitor_id is not None:
        params["monitorId"] = monitor_id
    if workspace is not None:
        params["workspacePath"] = workspace_path
    try:
        rows = ask_daemon(socket_path, "history.list", params)
    except DaemonError as error:
        return report_error(f"History failed: {error}", fmt == "json")
    if rows is not None:
        emit(rows, fmt, lambda: history_text(rows))
        return 0

    from agentmonitors.store import queries
    from agentmonitors.store.database import StoreError

    try:
        db = _open_existing(resolve_db_path(workspace_path))
        if db is None:
            found: list[dict[str, Any]] = []
        else:
            with db:
                found = [
                    row.to_json()
                    for row in queries.list_history(
                        db,
                        monitor_id=monitor_id,
                        workspace=workspace_path if workspace is not None else None,
                        limit=limit,
                    )
                ]
    except StoreError as error:
        return report_error(f"History failed: {error}", fmt == "json")
    if not found:
        return report_error(_nothing_persisted(workspace_path, socket_path), fmt == "json")
    if fmt == "toon":
        click.echo(OFFLINE_NOTICE)
    emit(found, fmt, lambda: OFFLINE_NOTICE + "\n" + history_text(found))
    return 0


# --------------------------------------------------------------------------- explain


@command.command("explain", help="Why a monitor did or did not reach a session, stage by stage.")
@click.argument("monitor_id")
@click.option("--dir", "monitors_dir", help="Monitors folder (default: .claude/monitors).")
@click.option("--workspace", help="Project directory (default: the current project).")
@click.option("--socket", help="Unix socket of the daemon.")
@click.option("--history-limit", type=click.IntRange(min=0), default=10, show_default=True)
@click.option("--event-limit", type=click.IntRange(min=0), default=10, show_default=True)
@format_option(("toon", "json", "text"), None)
def explain(
    monitor_id: str,
    monitors_dir: str | None,
    workspace: str | None,
    socket: str | None,
    history_limit: int,
    event_limit: int,
    output_format: str | None,
) -> int:
    from agentmonitors.cli.daemon import workspace_and_monitors
    from agentmonitors.daemon.client import DaemonError
    from agentmonitors.paths import resolve_db_path, resolve_socket_path
    from agentmonitors.runtime.explain import has_persisted_state, render_explain_text

    fmt = resolve_format(output_format)
    workspace_path, monitors_path = workspace_and_monitors(workspace, monitors_dir)
    socket_path = resolve_socket_path(workspace_path, socket)
    params = {
        "monitorId": monitor_id,
        "monitorsDir": monitors_path,
        "workspacePath": workspace_path,
        "historyLimit": history_limit,
        "eventLimit": event_limit,
    }
    try:
        report = ask_daemon(socket_path, "monitor.explain", params)
    except DaemonError as error:
        return report_error(f"Explain failed: {error}", fmt == "json")
    if report is not None:
        emit(report, fmt, lambda: render_explain_text(report))
        return 0

    from agentmonitors.runtime.clock import SystemClock
    from agentmonitors.runtime.explain import explain_monitor
    from agentmonitors.sources.registry import load_registry
    from agentmonitors.store.database import Database, StoreError

    try:
        db_path = resolve_db_path(workspace_path)
        existing = _open_existing(db_path)
        # With no database yet the definition stages can still be judged; use a
        # throwaway in-memory one rather than creating the real file.
        with existing if existing is not None else Database(":memory:") as db:
            offline = explain_monitor(
                db,
                load_registry(warn),
                monitor_id=monitor_id,
                workspace=workspace_path,
                monitors_dir=monitors_path,
                history_limit=history_limit,
                event_limit=event_limit,
                now_ms=SystemClock().now_ms(),
            )
    except StoreError as error:
        return report_error(f"Explain failed: {error}", fmt == "json")
    definition_failed = any(
        stage["id"] in ("definition", "scheduling") and stage["status"] == "failure"
        for stage in offline["stages"]
    )
    if not definition_failed and not has_persisted_state(offline):
        return report_error(_nothing_persisted(workspace_path, socket_path), fmt == "json")
    if definition_failed:
        emit(offline, fmt, lambda: render_explain_text(offline))
        return 0
    noticed = {"notice": OFFLINE_NOTICE, **offline}
    emit(noticed, fmt, lambda: OFFLINE_NOTICE + "\n" + render_explain_text(offline))
    return 0


# --------------------------------------------------------------------------- test

_BASELINE_NOTES: dict[str, tuple[str, str]] = {
    "file-fingerprint": (
        "In production, the agent process keeps running between observations, so file"
        " changes are detected across polls.",
        "This test command verifies that the source can read and fingerprint your files"
        " successfully.",
    ),
    "api-poll": (
        "In production, the agent process keeps running between observations, so API"
        " response changes are detected across polls.",
        "This test command verifies that the source can reach your API endpoint successfully.",
    ),
}
_DEFAULT_BASELINE_NOTES = (
    "In production, the agent process keeps running between observations, so changes are"
    " detected across polls.",
    "This test command verifies that the source is configured correctly.",
)
FOLLOWUP_DELAY_S = 0.1


def config_root_for(file_path: str) -> str:
    """The project a monitor file belongs to: the parent of its nearest ``.claude``/``.codex``.

    A file outside any such folder resolves against its own directory.
    """
    path = os.path.abspath(file_path)
    parts = path.split(os.sep)
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] in (".claude", ".codex"):
            return os.path.dirname(os.sep.join(parts[: index + 1]) or os.sep)
    return os.path.dirname(path)


def _globs_text(config: dict[str, Any]) -> str | None:
    globs = config.get("globs")
    if isinstance(globs, str):
        return globs
    if isinstance(globs, list) and all(isinstance(item, str) for item in globs):
        return ", ".join(globs)
    return None


def _observations_json(observations: list[Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for observation in observations:
        entry: dict[str, Any] = {"title": observation.title}
        if observation.snapshot is not None:
            entry["snapshot"] = observation.snapshot
        entries.append(entry)
    return entries


def _observations_text(observations: list[Any]) -> str:
    lines = [f"{len(observations)} observation(s):", ""]
    for observation in observations:
        lines.append(f"  Title: {observation.title}")
        lines.append(f"  Snapshot: {dump_json(observation.snapshot)}")
        lines.append("")
    return "\n".join(lines)


def _api_poll_summary(state: Any) -> str | None:
    """``  HTTP <status> (<bytes> bytes)`` from an api-poll baseline, so a bad URL shows."""
    if not isinstance(state, dict):
        return None
    status = state.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    body = state.get("body")
    size = f" ({len(body.encode('utf-8'))} bytes)" if isinstance(body, str) else ""
    return f"  HTTP {status}{size}"


def _command_poll_summary(state: Any) -> str | None:
    """``  Exit code <n> (<bytes> bytes of output)``, so a command that fails shows."""
    if not isinstance(state, dict) or state.get("health") != "ok":
        return None
    code = state.get("exitCode")
    stdout = state.get("stdout")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(stdout, str):
        return None
    size = len(stdout.encode("utf-8"))
    note = " (output truncated)" if state.get("truncated") is True else ""
    return f"  Exit code {code} ({size} bytes of output){note}"


_BASELINE_SUMMARIES = {"api-poll": _api_poll_summary, "command-poll": _command_poll_summary}


def _merged(*lists: list[str]) -> list[str]:
    seen: list[str] = []
    for items in lists:
        seen += [item for item in items if item not in seen]
    return seen


def _message(error: BaseException) -> str:
    return str(error).strip() or type(error).__name__


async def _observe_once(source: Any, config: dict[str, Any], context: Any) -> Any:
    from agentmonitors.sources.observation import ObservationResult

    observe = getattr(source, "observe", None)
    if not callable(observe):
        raise RuntimeError(f'source "{source.name}" cannot observe')
    outcome = await observe(config, context)
    if not isinstance(outcome, ObservationResult):
        raise TypeError(f'source "{source.name}" returned {type(outcome).__name__}')
    return outcome


def _load_for_test(path: str, as_json: bool) -> tuple[Any, Any] | int:
    """The parsed monitor and its source, or the exit code of the error reported."""
    from agentmonitors.monitor.parse import ParseFailure, parse_monitor, read_monitor_text
    from agentmonitors.sources.base import validate_scope
    from agentmonitors.sources.registry import load_registry

    if not os.path.exists(path):
        return report_error(f"Monitor file not found: {path}", as_json)
    if os.path.isdir(path):
        return report_error(
            f'"{path}" is a directory, not a file. Pass a single MONITOR.md file. To'
            f" validate a whole directory, use: agentmonitors validate '{path}'",
            as_json,
        )
    try:
        text = read_monitor_text(path)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return report_error(f"Cannot read monitor file: {reason}", as_json)
    monitor = parse_monitor(text, path)
    if isinstance(monitor, ParseFailure):
        return report_error(f"Parse error: {monitor.error}", as_json)
    registry = load_registry(warn)
    source = registry.get(monitor.source_name)
    if source is None:
        return report_error(
            f'Unknown source: "{monitor.source_name}". Available: {", ".join(registry.names())}',
            as_json,
        )
    problems = [issue.render("scope") for issue in validate_scope(source, monitor.source_config)]
    if problems:
        return report_error(f"Invalid monitor scope: {'; '.join(problems)}", as_json)
    return monitor, source


def _no_files_matched(
    name: str, source: str, config: dict[str, Any], workspace: str, as_json: bool
) -> int:
    globs = _globs_text(config)
    message = (
        "No files matched this monitor's globs"
        + (f" (globs: {globs})" if globs is not None else "")
        + f". Check watch.globs and watch.cwd relative to workspace: {workspace}"
    )
    if not as_json:
        return report_error(message, False)
    result = {
        "monitor": name,
        "source": source,
        "baseline": False,
        "outcome": "no-files-matched",
        "observations": [],
        "error": message,
    }
    click.echo(dump_json(result))
    return 1


def _test_json(
    name: str, source: str, baseline: bool, observations: list[Any], warnings: list[str]
) -> int:
    result: dict[str, Any] = {
        "monitor": name,
        "source": source,
        "baseline": baseline,
        "observations": _observations_json(observations),
    }
    if warnings:
        result["warnings"] = warnings
    click.echo(dump_json(result))
    return 0


@command.command("test", help="Dry-run one monitor file: observe it once, store nothing.")
@click.argument("path")
@format_option(("text", "json"), "text")
def test_monitor(path: str, output_format: str) -> int:
    import asyncio
    import time

    from agentmonitors.runtime.clock import SystemClock
    from agentmonitors.sources.observation import ObservationContext

    as_json = output_format == "json"
    loaded = _load_for_test(path, as_json)
    if isinstance(loaded, int):
        return loaded
    monitor, source = loaded
    name, config = monitor.display_name, monitor.source_config
    if not as_json:
        click.echo(f'Testing monitor "{name}" (source: {source.name})...')
    workspace = config_root_for(path)

    def observe(previous: Any) -> Any:
        context = ObservationContext(
            previous_state=previous,
            now_ms=SystemClock().now_ms(),
            workspace_path=workspace,
            monitor_id=monitor.id,
        )
        return asyncio.run(_observe_once(source, config, context))

    try:
        first = observe(None)
    except Exception as error:
        return report_error(f"Observation failed: {_message(error)}", as_json)

    if first.outcome == "no-files-matched":
        return _no_files_matched(name, source.name, config, workspace, as_json)

    if first.observations or not getattr(source, "stateful", False):
        if as_json:
            return _test_json(name, source.name, False, first.observations, list(first.warnings))
        for item in first.warnings:
            warn(item)
        click.echo(
            _observations_text(first.observations)
            if first.observations
            else "No observations produced."
        )
        return 0

    # A stateful source's first observation only records its baseline.
    baseline_state = first.next_state if first.has_next_state else None
    if not as_json:
        click.echo(
            f'\nBaseline established. The "{source.name}" source requires a prior baseline'
            " before it can detect changes."
        )
        summarize = _BASELINE_SUMMARIES.get(source.name)
        summary = summarize(baseline_state) if summarize is not None else None
        if summary is not None:
            click.echo(summary)
        click.echo("Running a second observation to demonstrate change detection...\n")
    time.sleep(FOLLOWUP_DELAY_S)
    try:
        second = observe(baseline_state)
    except Exception as error:
        return report_error(f"Observation failed: {_message(error)}", as_json)
    warnings = _merged(list(first.warnings), list(second.warnings))
    if as_json:
        return _test_json(name, source.name, True, second.observations, warnings)
    for item in warnings:
        warn(item)
    if second.observations:
        click.echo(_observations_text(second.observations))
        return 0
    click.echo(
        "No changes detected since baseline. This is expected — both observations happened"
        " within the same command invocation."
    )
    for note in _BASELINE_NOTES.get(source.name, _DEFAULT_BASELINE_NOTES):
        click.echo(f"\n{note}")
    return 0

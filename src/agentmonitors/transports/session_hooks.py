"""``session start`` and ``session end``: the SessionStart and SessionEnd hooks.

``session start`` boots the workspace's daemon when none answers, registers (or
resumes) the session, and prints the post-compact recap in the same process.
Standard library only, like every hook command.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from agentmonitors.fastpath.argv import VALUE, parse_strict
from agentmonitors.paths import default_hook_state_path
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS, adapter_for
from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.transports.hosts.base import HookPayload, HostAdapter
    from agentmonitors.workspace import LocalState

BOOT_WAIT_S = 8.0
BOOT_PING_S = 0.15
BOOT_POLL_MS = 1000


def _count_definitions(workspace: str) -> int:
    """Monitor files under the project's monitors folder, valid or not."""
    root = os.path.join(workspace, ".claude", "monitors")
    count = 0
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            count += sum(1 for _ in _monitor_files(entry.path))
        elif entry.name.endswith(".md") and entry.name.lower() != "readme.md":
            count += 1
    return count


def _monitor_files(folder: str) -> list[str]:
    found = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        if "MONITOR.md" in files:
            found.append(os.path.join(current, "MONITOR.md"))
    return found


def disabled_advisory(count: int) -> str:
    plural = "" if count == 1 else "s"
    return (
        f"AgentMon: monitoring is disabled for this project ({count} monitor definition{plural} "
        "found under .claude/monitors/, but none of them are being watched). To enable it, "
        "run `agentmonitors init --enable-only` in the project root (it turns monitoring on "
        "and gitignores AgentMon's local files); the next session then starts the daemon. "
        "Check the definitions any time with `agentmonitors validate`."
    )


def parse_host_args(command: str, args: list[str]) -> HostAdapter | str:
    """``--host NAME`` (or ``--host=NAME``), the only flag of the session hooks; a
    string is the usage error."""
    parsed = parse_strict(
        {"--host": ("host", VALUE, HOSTS)},
        args,
        defaults={"host": DEFAULT_HOST},
        unknown=lambda arg: f"{command} takes only --host (got {arg})",
    )
    return parsed if isinstance(parsed, str) else adapter_for(parsed["host"])


def run_session_start(args: list[str]) -> int:
    adapter = parse_host_args("session start", args)
    if isinstance(adapter, str):
        sys.stderr.write(f"error: {adapter}\n")
        return 1
    from agentmonitors.transports.deliver import say_nothing

    try:
        return session_start(adapter.read(), adapter)
    except Exception as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    finally:
        say_nothing(adapter)


def session_start(payload: HookPayload, adapter: HostAdapter = CLAUDE_CODE) -> int:
    if payload.session_id is None:
        return 0
    workspace, state = adapter.project(payload)
    if not state.enabled:
        from agentmonitors.workspace import find_workspace_root

        count = _count_definitions(find_workspace_root(workspace))
        if count:
            from agentmonitors.transports.deliver import _quiet, _write

            _write(disabled_advisory(count), adapter.session_start_event, "json", _quiet, adapter)
        return 0

    from agentmonitors.daemon.client import call, ping
    from agentmonitors.paths import fit_socket_path, notice_once, workspace_db, workspace_socket
    from agentmonitors.workspace import write_local_state

    # The enable file may come with the repository: a `socket:` or `db:` that is not
    # ours is ignored (said on stderr) and replaced below by the workspace's own.
    socket = fit_socket_path(workspace_socket(workspace, state, notice=notice_once))
    db = workspace_db(workspace, state, notice=notice_once)
    # The daemon this start boots registers the session itself before its first check,
    # so what that check finds (a command failing from the start) reaches this session.
    booting = f"{adapter.name}:{payload.session_id}"
    failure = None if ping(socket) else _boot(workspace, socket, db, state.reap_after_ms, booting)
    if failure is not None:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        write_local_state(workspace, state._replace(last_boot_failure_at=stamp))
        sys.stderr.write(f"error: {failure}\n")
        return 1
    write_local_state(
        workspace,
        state._replace(enabled=True, socket=socket, db=db, last_boot_failure_at=None),
    )
    session = call(
        socket,
        "session.open",
        {
            "adapter": adapter.name,
            "hostSessionId": payload.session_id,
            "agentIdentity": payload.session_id,
            "hookStatePath": default_hook_state_path(payload.session_id, workspace),
            "workspacePath": workspace,
            "role": "lead",
        },
    )
    sys.stderr.write(f"AgentMon: session {session['id']} registered; daemon at {socket}\n")

    from agentmonitors.transports.deliver import _quiet, deliver_to_session
    from agentmonitors.transports.deliver_debug import blocked_monitor_ids

    deliver_to_session(
        socket,
        payload.session_id,
        "post-compact",
        event_name=adapter.session_start_event,
        workspace=workspace,
        output_format="json",
        debug=_quiet,
        adapter=adapter,
        preface=_preface(
            blocked_monitor_ids(socket), workspace, state, session["id"], socket, adapter
        ),
    )
    return 0


def _preface(
    waiting: list[str],
    workspace: str,
    state: LocalState,
    session_id: str,
    socket: str,
    adapter: HostAdapter,
) -> str:
    """The lines before the recap: the approval line, then the live-updates offer."""
    from agentmonitors.transports.live_hint import live_sentence

    try:
        live = live_sentence(workspace, state.live, session_id, socket, host=adapter.name)
    except Exception:  # an offer is never worth a failed session start
        live = ""
    return "\n".join(line for line in (approval_line(waiting), live) if line)


def approval_line(waiting: list[str]) -> str:
    """The one line telling the agent which monitors wait, and that approving is the user's."""
    if not waiting:
        return ""
    names = ", ".join(waiting)
    which = "monitor waits" if len(waiting) == 1 else "monitors wait"
    return (
        f"AgentMon: {len(waiting)} project {which} for the user's approval and will not run "
        f"until then: {names}. Tell the user; only they may approve, after reading what each "
        "runs or reads (`agentmonitors monitor approve --list`, then `agentmonitors monitor "
        "approve <id>`). Do not run the approve command yourself."
    )


def _boot(
    workspace: str, socket: str, db: str, reap_after_ms: int, boot_session: str | None = None
) -> str | None:
    """Start a detached daemon for ``workspace`` and wait until it answers.

    ``boot_session`` (``adapter:host session id``) is registered by the daemon before
    its first tick.

    Returns None once it answers, else what went wrong: a daemon that exited says why
    in its log (a database that cannot be opened, say), and that line is the answer.
    """
    from agentmonitors.daemon.client import ping
    from agentmonitors.paths import workspace_log_path

    argv = [
        os.path.join(workspace, ".claude", "monitors"),
        "--workspace",
        workspace,
        "--socket",
        socket,
        "--poll-ms",
        str(BOOT_POLL_MS),
        "--reap-after-ms",
        str(reap_after_ms),
    ]
    if boot_session is not None:
        argv += ["--boot-session", boot_session]
    from agentmonitors.daemon.spawn import spawn_daemon
    from agentmonitors.paths import neutral_cwd

    env = {**os.environ, "AGENTMONITORS_DB": db, "AGENTMONITORS_SOCKET": socket}
    log_path = workspace_log_path(workspace)
    log_start = _size(log_path)
    # Never the project folder: nothing there may stand in for a module the daemon loads.
    pid = spawn_daemon(argv, env, log_path, neutral_cwd(workspace))
    deadline = time.monotonic() + BOOT_WAIT_S
    while time.monotonic() < deadline:
        if ping(socket, timeout_s=0.5):
            return None
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            finished = 0
        if finished:
            # It exited: maybe another session's daemon won the race; it may answer now.
            if ping(socket, timeout_s=0.5):
                return None
            reason = _logged_error(log_path, log_start)
            if reason is not None:
                return f"Daemon failed to start: {reason} (log: {log_path})"
            return f"Daemon exited at start; see its log: {log_path}"
        time.sleep(BOOT_PING_S)
    return f"Daemon failed to start within {int(BOOT_WAIT_S)}s"


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _logged_error(log_path: str, start: int) -> str | None:
    """The last ``error: ...`` the daemon wrote to its log since ``start``."""
    try:
        with open(log_path, "rb") as handle:
            # A log rotated at the spawn starts afresh.
            handle.seek(start if os.fstat(handle.fileno()).st_size >= start else 0)
            tail = handle.read(65536).decode("utf-8", "replace")
    except OSError:
        return None
    found = None
    for line in tail.splitlines():
        marker = line.find("error: ")
        if marker >= 0:
            found = line[marker + len("error: ") :].strip()
    return found or None


def run_session_end(args: list[str]) -> int:
    """The SessionEnd hook: close the matching session. Silent, always 0."""
    adapter = parse_host_args("session end", args)
    if isinstance(adapter, str):
        sys.stderr.write(f"error: {adapter}\n")
        return 0
    with contextlib.suppress(Exception):
        session_end(adapter.read(), adapter)
    from agentmonitors.transports.deliver import say_nothing

    say_nothing(adapter)
    return 0


def session_end(payload: HookPayload, adapter: HostAdapter = CLAUDE_CODE) -> None:
    if payload.session_id is None:
        return
    workspace, state = adapter.project(payload)
    if not state.enabled or state.socket is None:
        return
    from agentmonitors.daemon.client import DaemonError, call
    from agentmonitors.paths import fit_socket_path, workspace_socket

    socket = fit_socket_path(workspace_socket(workspace, state))
    try:
        sessions = call(socket, "session.list", {})
        match = next(
            (
                item
                for item in sessions or []
                if isinstance(item, dict) and item.get("hostSessionId") == payload.session_id
            ),
            None,
        )
        if match is None:
            return
        call(socket, "session.close", {"sessionId": match["id"]})
    except DaemonError:
        return
    sys.stderr.write(f"AgentMon: session {match['id']} ended\n")

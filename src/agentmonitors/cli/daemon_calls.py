"""What the manual socket commands share: finding the socket and reporting daemon trouble.

Free of click and typing, like :mod:`agentmonitors.cli.output`: the agent's own
commands run through here without them.
"""

from __future__ import annotations

from agentmonitors.cli.output import echo, print_error, report_error
from agentmonitors.daemon.client import (
    DaemonConnectionError,
    DaemonError,
    DaemonRefusedError,
    call,
)
from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE, REQUEST_TIMEOUT_S
from agentmonitors.paths import resolve_socket_path
from agentmonitors.workspace import read_local_state, resolve_workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSION_HINT = "Run `agentmonitors session list` to find a session id."


def manual_socket(socket: str | None, workspace: str | None = None) -> str:
    """``--socket``, else the environment, else the workspace's socket, else the global one."""
    return resolve_socket_path(
        resolve_workspace(workspace), socket, warn=lambda text: echo(text, err=True)
    )


def unreachable_text(socket_path: str, method: str, waited_s: float) -> str:
    """What to say when a daemon took the connection but did not answer in time: it is
    there, so the how-to-start message would send the user the wrong way."""
    return (
        f"Timed out waiting for AgentMon daemon at {socket_path}: it did not answer"
        f" {method} within {waited_s:g} s. It may be busy; try again, and run"
        " `agentmonitors daemon status` if it keeps happening."
    )


NOT_ENABLED_NO_DAEMON = (
    "No daemon running, and this folder is not an enabled project, so none starts here:"
    " run `agentmonitors init --enable-only` in the project root (a Claude Code session"
    " then starts its daemon), or pass --socket if a daemon listens elsewhere."
)


def no_daemon_text(workspace: str | None = None) -> str:
    """What to say when no daemon answers: how to start one, where one can start.

    ``daemon start`` refuses a folder that is not an enabled project, so there the first
    step is to enable it (every suggested command must succeed where it is suggested).
    """

    if read_local_state(resolve_workspace(workspace)).enabled:
        return NO_DAEMON_MESSAGE
    return NOT_ENABLED_NO_DAEMON


class DaemonCallFailed(Exception):
    """Already reported to the user; the command exits 1."""


def ask(
    socket_path: str,
    method: str,
    params: dict[str, Any],
    *,
    as_json: bool = False,
    timeout_s: float | None = None,
    stored: bool = False,
) -> Any:
    """Call the daemon; on failure print the right message and raise ``DaemonCallFailed``.

    A missing daemon gets the how-to-start message on stderr (text even under JSON), a
    socket that is not the user's own the refusal naming it and why; one
    that is there but does not answer within ``timeout_s`` (the protocol's request
    timeout by default) is said to be busy, not missing. An error the daemon reports is
    printed as is, with the session hint when it is about an unknown session.

    ``stored``: when no daemon answers at all, the workspace database answers instead
    (``cli/stored_delivery.py``), with a notice on stderr; only a workspace with no
    database gets the how-to-start message.
    """

    waited = REQUEST_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        return call(socket_path, method, params, timeout_s=waited)
    except DaemonRefusedError as error:
        print_error(error.message)  # names the socket and why it is not ours
        raise DaemonCallFailed from None
    except DaemonConnectionError as error:
        if stored and not error.timed_out:
            return _from_store(method, params, as_json)
        print_error(
            unreachable_text(socket_path, method, waited) if error.timed_out else no_daemon_text()
        )
        raise DaemonCallFailed from None
    except DaemonError as error:
        message = str(error)
        if "Session not found" in message:
            message = f"{message}. {SESSION_HINT}"
        report_error(message, as_json)
        raise DaemonCallFailed from None


def _from_store(method: str, params: dict[str, Any], as_json: bool) -> Any:
    """The database's answer when no daemon runs; reported like the daemon's errors."""
    # Lazy: sqlite3 and the delivery layer load only when no daemon answers; the agent's
    # quick commands with a daemon must not load them (tests/test_imports.py).
    from agentmonitors.cli import stored_delivery

    try:
        answer = stored_delivery.stored_answer(method, params)
    except stored_delivery.NothingStored:
        print_error(no_daemon_text())
        raise DaemonCallFailed from None
    except stored_delivery.SessionNotFound as error:
        report_error(f"{error}. {SESSION_HINT}", as_json)
        raise DaemonCallFailed from None
    except stored_delivery.StoreError as error:
        report_error(f"{NO_DAEMON_MESSAGE} The stored state could not be read: {error}", as_json)
        raise DaemonCallFailed from None
    echo(stored_delivery.notice_for(method), err=True)
    return answer

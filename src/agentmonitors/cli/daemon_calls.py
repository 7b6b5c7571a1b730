"""What the manual socket commands share: finding the socket and reporting daemon trouble.

Free of click and typing, like :mod:`agentmonitors.cli.output`: the agent's own
commands run through here without them.
"""

from __future__ import annotations

from agentmonitors.cli.output import echo, print_error, report_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSION_HINT = "Run `agentmonitors session list` to find a session id."


def manual_socket(socket: str | None, workspace: str | None = None) -> str:
    """``--socket``, else the environment, else the workspace's socket, else the global one."""
    from agentmonitors.paths import resolve_socket_path
    from agentmonitors.workspace import resolve_workspace

    return resolve_socket_path(
        resolve_workspace(workspace), socket, warn=lambda text: echo(text, err=True)
    )


class DaemonCallFailed(Exception):
    """Already reported to the user; the command exits 1."""


def ask(socket_path: str, method: str, params: dict[str, Any], *, as_json: bool = False) -> Any:
    """Call the daemon; on failure print the right message and raise ``DaemonCallFailed``.

    A missing daemon gets the how-to-start message on stderr (text even under JSON);
    an error the daemon reports is printed as is, with the session hint when it is
    about an unknown session.
    """
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call
    from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE

    try:
        return call(socket_path, method, params)
    except DaemonConnectionError:
        print_error(NO_DAEMON_MESSAGE)
        raise DaemonCallFailed from None
    except DaemonError as error:
        message = str(error)
        if "Session not found" in message:
            message = f"{message}. {SESSION_HINT}"
        report_error(message, as_json)
        raise DaemonCallFailed from None

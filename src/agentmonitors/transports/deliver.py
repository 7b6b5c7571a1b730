"""``hook deliver``: hand pending deliveries to the agent at a host's hook.

The host (``--host``, Claude Code by default) decides the payload and the output
shapes through its adapter (``transports/hosts``); this module knows neither.
This runs on every prompt, after every tool call and at every stop, so it stays on
the standard library and prints nothing to stdout unless it has a delivery. Any
failure ends quietly with exit code 0: a hook must never break the user's prompt, and
input it cannot use (garbage, empty, an event it does not serve) is explained only
under ``--debug``.
``--debug`` explains each step on stderr and leaves stdout byte-identical.
"""

from __future__ import annotations

import sys

from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.fastpath.argv import FLAG, VALUE, Spec, parse_strict
from agentmonitors.paths import fit_socket_path, notice_once, workspace_socket
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS, adapter_for
from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from agentmonitors.transports.hosts.base import HookPayload, HostAdapter

DEBUG_PREFIX = "agentmonitors hook deliver --debug: "
NO_SESSION_WARNING = (
    "hook deliver: no session_id in the stdin payload — expected a Claude Code hook JSON "
    "payload on stdin; nothing delivered."
)
NO_SOCKET_WARNING = (
    "hook deliver: no per-workspace socket configured (neither --socket nor a `socket:` "
    "entry in .claude/agentmonitors.local.md) — refusing to fall back to a shared default "
    "socket; nothing delivered. Start a daemon for this workspace with `agentmonitors daemon "
    "run --detach`, or pass --socket."
)
BOOT_FAILED_WARNING = (
    "hook deliver: no per-workspace socket configured — the last automatic daemon boot for "
    "this workspace (via the SessionStart hook) failed to come up in time; nothing "
    "delivered. It will retry automatically the next time a session starts here — run "
    "`agentmonitors daemon run --detach` yourself only if you need it available before then."
)


def _field(value: str | None) -> str:
    # Lazy: the debug text's helpers load only under --debug.
    from agentmonitors.transports.deliver_debug import field

    return field(value)


class DeliverOptions:
    __slots__ = ("debug", "host", "lifecycle", "output_format", "socket")

    def __init__(
        self,
        lifecycle: str | None = None,
        output_format: str = "json",
        socket: str | None = None,
        debug: bool = False,
        host: str = DEFAULT_HOST,
    ) -> None:
        self.lifecycle = lifecycle
        self.output_format = output_format
        self.socket = socket
        self.debug = debug
        self.host = host


# Kept equal to the click declaration by tests/fastpath/test_argv.py.
DELIVER_OPTIONS: Spec = {
    "--lifecycle": ("lifecycle", VALUE, LIFECYCLES),
    "--format": ("output_format", VALUE, ("json", "text")),
    "--socket": ("socket", VALUE, None),
    "--debug": ("debug", FLAG, None),
    "--host": ("host", VALUE, HOSTS),
}


def parse_deliver_args(args: list[str]) -> DeliverOptions | str:
    """Flags of ``hook deliver``; a string is the usage error."""
    parsed = parse_strict(DELIVER_OPTIONS, args)
    return parsed if isinstance(parsed, str) else DeliverOptions(**parsed)


def run_hook_deliver(args: list[str]) -> int:
    """Entry point of ``agentmonitors hook deliver``; always returns 0."""
    parsed = parse_deliver_args(args)
    if isinstance(parsed, str):
        sys.stderr.write(f"error: {parsed}\n")
        return 0
    debug: Callable[[str], None] = _to_stderr if parsed.debug else _quiet
    adapter = adapter_for(parsed.host)
    _WRITES.clear()
    try:
        deliver(adapter.read(), parsed, debug, adapter)
    except Exception as error:  # a hook never breaks the prompt
        debug(f"swallowed error: {type(error).__name__}: {error}")
    say_nothing(adapter, parsed.output_format)
    return 0


_WRITES: list[str] = []
"""What this process printed for the host: a hook runs once per process."""


def say_nothing(adapter: HostAdapter, output_format: str = "json") -> None:
    """Print the host's "nothing" when this process printed no delivery.

    Claude Code's and Codex's is empty; Cursor's is ``{}``.
    """
    if _WRITES or not adapter.nothing or output_format == "text":
        return
    try:
        sys.stdout.write(adapter.nothing)
        sys.stdout.flush()
    except Exception:  # a closed stdout: the host sees nothing, which is the same
        return


def _quiet(line: str) -> None:
    del line


def _to_stderr(line: str) -> None:
    sys.stderr.write(DEBUG_PREFIX + line + "\n")


def deliver(
    payload: HookPayload,
    options: DeliverOptions,
    debug: Callable[[str], None],
    adapter: HostAdapter = CLAUDE_CODE,
) -> bool:
    """Run the delivery steps; True when something was written to stdout."""
    debugging = debug is not _quiet
    if debugging:  # formatting untrusted fields costs an import: only when asked
        debug(
            f"payload session_id={_field(payload.session_id)} "
            f"hook_event_name={_field(payload.hook_event_name)} cwd={_field(payload.cwd)}"
        )
    # Bad input is not the user's prompt's business: its reason is said under --debug
    # only (the hook contract, docs/cli.md "Hooks").
    if payload.session_id is None:
        debug(_w1(adapter).removeprefix("hook deliver: "))
        return False
    lifecycles = adapter.lifecycles(payload, options.lifecycle)
    if not lifecycles:
        if payload.hook_event_name == adapter.stop_event and payload.stop_guard:
            debug(
                f"stopped: {adapter.stop_event} hook already active, so nothing is injected again"
            )
            return False
        if debugging:
            debug(
                f"hook_event_name {_field(payload.hook_event_name)} does not map "
                f"to a delivery lifecycle (only {_event_names(adapter)} do); nothing delivered."
            )
        return False
    debug("lifecycle " + " then ".join(lifecycles))

    workspace, state = adapter.project(payload)
    if not state.enabled:
        if debugging:
            debug(
                f"stopped: monitoring is not enabled in {_field(workspace)} or any folder "
                "above it (nor under $CLAUDE_PROJECT_DIR); run `agentmonitors init "
                "--enable-only` in the project to enable it"
            )
        return False
    if debugging:
        debug(f"workspace {_field(workspace)} (enabled, socket {state.socket or '(none)'})")
    if options.socket is None and state.socket is None:
        warning = BOOT_FAILED_WARNING if state.last_boot_failure_at else NO_SOCKET_WARNING
        sys.stderr.write(warning + "\n")
        return False
    if options.socket is not None:
        socket = fit_socket_path(options.socket, explicit=True)
    else:
        # The enable file may be a repository's: its `socket:` counts only when it names
        # a socket of ours; otherwise the workspace's own socket is used, said on stderr.
        socket = fit_socket_path(workspace_socket(workspace, state, notice=notice_once))
    # Lazy: a hook in a project that is not enabled never talks to a daemon.
    from agentmonitors.transports.deliver_session import deliver_to_session

    # A host that cannot reach a lifecycle tries it at the next point it does reach:
    # what was held for it is delivered first, the point's own lifecycle after.
    return any(
        deliver_to_session(
            socket,
            payload.session_id,
            lifecycle,
            event_name=payload.hook_event_name,
            workspace=workspace,
            output_format=options.output_format,
            debug=debug,
            channel_delivery_ids=payload.channel_delivery_ids,
            adapter=adapter,
        )
        for lifecycle in lifecycles
    )


def _w1(adapter: HostAdapter) -> str:
    if adapter is CLAUDE_CODE:
        return NO_SESSION_WARNING
    return NO_SESSION_WARNING.replace("a Claude Code hook", f"a {adapter.title} hook")


def _event_names(adapter: HostAdapter) -> str:
    names = list(adapter.events)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _write(
    text: str,
    event_name: str | None,
    output_format: str,
    debug: Callable[[str], None],
    adapter: HostAdapter = CLAUDE_CODE,
) -> bool:
    """Print a delivery where the host reads it; False when stdout is gone."""
    output = text if output_format == "text" else adapter.output(event_name, text)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except Exception as error:  # a closed or broken stdout: nothing reached the host
        debug(f"write failed ({error}); releasing the reservation")
        return False
    _WRITES.append(output)
    return True

"""The host adapter seam: what one agent host's hooks look like to the delivery path.

A *host* is the program running the agent (Claude Code, Codex, Cursor). Its hooks run
``hook deliver``, ``session start`` and ``session end`` with a JSON payload on stdin and
read what they print. Everything that differs between hosts lives on one
:class:`HostAdapter`; the delivery path (``transports/deliver.py``,
``transports/session_hooks.py``, ``transports/handoff.py``) asks the adapter and
knows no host's shapes. An adapter says:

- **events**: the host's event names and the delivery lifecycles each one tries, in
  order (:attr:`HostAdapter.events`). A host that cannot reach a lifecycle lists it on
  the next event it does reach, after that event's own (Cursor's ``stop`` tries
  ``turn-interruptible`` first), so what the core would have delivered waits for it;
- **payload**: how stdin maps to a normalised :class:`HookPayload` (session, turn, cwd,
  stop guard, source, prompt) in :meth:`HostAdapter.normalise`;
- **emitters**: how to inject text (:meth:`HostAdapter.inject`), how to continue after a
  stop (:meth:`HostAdapter.continue_after_stop`) and what "nothing" is on stdout
  (:attr:`HostAdapter.nothing`);
- **capabilities**: which delivery points the host reaches (:attr:`HostAdapter.reaches`,
  drawn from :data:`POINTS`) and, for each it cannot, what happens instead
  (:attr:`HostAdapter.instead`); ``doctor`` prints those lines;
- **robustness**: :meth:`HostAdapter.parse` tolerates stray bytes before the JSON, and
  every emitter builds its output with one JSON encoder, so the output always parses.

Standard library only, and nothing heavier than :mod:`agentmonitors.fastpath.jsonline`
at import time: every hook of every host loads this module.
"""

from __future__ import annotations

import os
import sys

from agentmonitors.delivery.host_capabilities import (
    DEREGISTER,
    POINTS,
    POST_COMPACT,
    REGISTER,
    TURN_IDLE,
    TURN_INTERRUPTIBLE,
)
from agentmonitors.fastpath.jsonline import dumps, loads
from agentmonitors.paths import session_marker
from agentmonitors.workspace import resolve_enabled_project

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import ClassVar

    from agentmonitors.workspace import LocalState

__all__ = [
    "DEREGISTER",
    "POINTS",
    "POST_COMPACT",
    "REGISTER",
    "TURN_IDLE",
    "TURN_INTERRUPTIBLE",
    "HookPayload",
    "HostAdapter",
    "decode_object",
    "oversized",
    "string_field",
]

MAX_FIELD_BYTES = 4096
"""A field longer than this is not a real hook payload; registering it would slow every
later hook (docs/compatibility.md, "Where we are stricter")."""


class HookPayload:
    """The normalised fields of one hook payload; absent, non-string or oversized is None
    (see :func:`oversized`).

    ``stop_guard`` is True when the host is already continuing because a stop hook
    asked it to (Claude Code's and Codex's ``stop_hook_active``, Cursor's ``loop_count``
    at its limit) or the stop is not a normal end of turn: nothing is injected then,
    so a stop can never loop.
    """

    __slots__ = (
        "channel_delivery_ids",
        "cwd",
        "hook_event_name",
        "session_id",
        "source",
        "stop_guard",
        "turn_id",
    )

    def __init__(
        self,
        session_id: str | None = None,
        hook_event_name: str | None = None,
        cwd: str | None = None,
        stop_guard: bool = False,
        channel_delivery_ids: tuple[str, ...] = (),
        turn_id: str | None = None,
        source: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.hook_event_name = hook_event_name
        self.cwd = cwd
        self.stop_guard = stop_guard
        self.channel_delivery_ids = channel_delivery_ids
        self.turn_id = turn_id
        self.source = source


def string_field(data: Mapping[str, object], name: str) -> str | None:
    """``data[name]`` when it is a string (empty counts as absent), else None."""
    value = data.get(name)
    return value if isinstance(value, str) and value else None


def oversized(*values: str | None) -> bool:
    """True when any value is not a usable identity: longer than :data:`MAX_FIELD_BYTES`
    in UTF-8, or holding a NUL or a lone surrogate (a JSON escape such as ``\\ud800``).

    Such a value is no real host's: it cannot name a file or a path (NUL), nor be
    written to the daemon or a file (a surrogate has no UTF-8), so the payload is
    treated as malformed rather than failing the hook half-way.
    """
    for value in values:
        if value is None:
            continue
        if "\x00" in value:
            return True
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            return True
        if size > MAX_FIELD_BYTES:
            return True
    return False


def decode_object(raw: str | bytes) -> dict[str, object] | None:
    """The JSON object in ``raw``, or None.

    Stray bytes before the object (a shell profile's banner, a BOM) are skipped: the
    object is read from the first ``{`` when the whole text does not parse. Whatever
    follows it must be whitespace.
    """
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not raw.strip():
        return None
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        start = raw.find("{")
        if start <= 0:
            return None
        try:
            data = loads(raw[start:])
        except (ValueError, RecursionError):
            return None
    return data if isinstance(data, dict) else None


class HostAdapter:
    """One host's hooks. A subclass sets the class attributes and :meth:`normalise`,
    and overrides an emitter only where its host differs from Claude Code's shape."""

    name = ""
    """The ``--host`` value, and the adapter sessions are registered under."""
    title = ""
    """The host's name for people (``doctor``, ``session list``)."""
    events: ClassVar[dict[str, tuple[str, ...]]] = {}
    """Event name → the lifecycles ``hook deliver`` tries there, in order."""
    session_start_event = ""
    session_end_event: str | None = None
    stop_event: str | None = None
    project_dir_env: str | None = None
    """The environment variable naming the project when the payload has no folder."""
    reaches: frozenset[str] = frozenset(POINTS)
    instead: ClassVar[dict[str, str]] = {}
    """Unreachable point → one sentence saying what happens instead. ``doctor`` runs
    below the transports, so it reads the same sentences from
    ``delivery/host_capabilities.py``; a test keeps the two equal."""
    nothing = ""
    """What a hook prints when it has nothing to say."""

    def normalise(self, data: Mapping[str, object]) -> HookPayload:
        """The fields of a decoded payload object (an empty payload when untrustworthy)."""
        raise NotImplementedError

    def parse(self, raw: str | bytes) -> HookPayload:
        """Parse stdin; empty, bad JSON or a non-object gives an empty payload."""
        data = decode_object(raw)
        return HookPayload() if data is None else self.normalise(data)

    def read(self) -> HookPayload:
        """Read all of stdin (never block on a terminal)."""
        stream = sys.stdin
        if stream is None:
            return HookPayload()
        try:
            if stream.isatty():
                return HookPayload()
            return self.parse(stream.buffer.read() if hasattr(stream, "buffer") else stream.read())
        except (OSError, ValueError):
            return HookPayload()

    def lifecycles(self, payload: HookPayload, override: str | None) -> tuple[str, ...]:
        """What ``hook deliver`` tries for this payload, in order; () for nothing.

        The override wins; a guarded stop gets nothing, so a stop never loops.
        """
        if override is not None:
            return (override,)
        event = payload.hook_event_name or ""
        if event == self.stop_event and payload.stop_guard:
            return ()
        return self.events.get(event, ())

    def inject(self, event_name: str | None, text: str) -> str:
        """Stdout that puts ``text`` into the model's context at this event."""
        return dumps(
            {
                "continue": True,
                "hookSpecificOutput": {
                    "hookEventName": event_name or "",
                    "additionalContext": text,
                },
            }
        )

    def continue_after_stop(self, event_name: str | None, text: str) -> str:
        """Stdout that makes the host run one more turn with ``text`` at a stop."""
        return self.inject(event_name, text)

    def output(self, event_name: str | None, text: str) -> str:
        """The stdout carrying ``text`` at this event: a continuation at a stop."""
        if self.stop_event is not None and event_name == self.stop_event:
            return self.continue_after_stop(event_name, text)
        return self.inject(event_name, text)

    def environment(self, environ: Mapping[str, str]) -> Mapping[str, str]:
        """``environ`` as project resolution reads it: the host's project folder
        variable under the name the workspace lookup uses."""
        if self.project_dir_env is None or self.project_dir_env == "CLAUDE_PROJECT_DIR":
            return environ
        folder = environ.get(self.project_dir_env)
        rest = {key: value for key, value in environ.items() if key != "CLAUDE_PROJECT_DIR"}
        return {**rest, "CLAUDE_PROJECT_DIR": folder} if folder else rest

    def project(self, payload: HookPayload) -> tuple[str, LocalState]:
        """The enabled project a hook acts on, and its enable-file state.

        Found by walking up from the payload's folder (which follows the agent's
        ``cd``), falling back to the host's project variable; a project where this
        session is already registered wins over a nearer enabled one (see
        ``resolve_enabled_project``). When nothing is enabled, the state says so and
        the path is where the search started.
        """
        marker = session_marker(payload.session_id) if payload.session_id else None
        return resolve_enabled_project(payload.cwd, marker, self.environment(os.environ))

    def record_session_environment(self, host_session_id: str, environ: Mapping[str, str]) -> None:
        """At session start, in the session's own environment: keep what the daemon
        needs of it later to reach this session (nothing, for most hosts)."""
        del host_session_id, environ

    def unreachable(self) -> list[tuple[str, str]]:
        """``(point, what happens instead)`` for every point this host cannot reach."""
        return [
            (point, self.instead.get(point, "")) for point in POINTS if point not in self.reaches
        ]

"""The codex-queue runner: the daemon wakes an idle interactive Codex thread.

See docs/architecture.md, "Transports" (codex-queue). A task on the daemon's loop looks
at the workspace's active Codex leads when there is a reason to: a tick stored events,
a delivery request changed a session, a high event's settle window ends, a lease lapses,
or a wake it tried is due again (no fixed poll) (``delivery/transports/
codex_queue.py`` says which sessions it serves). One with something the next prompt
would surface (settled high events, the normal reminder) is woken when Codex's daemon
holds its thread idle and a TUI still shows it (``daemon/codex_probe.py``): the
delivery is reserved and rendered through the transport, ``codex queue`` runs as a
child process with a time limit, and the push then waits for its proof (the woken
prompt's UserPromptSubmit). A failure is logged and releases the reservation, so the
hooks deliver those events. ``live: off`` in the enable file turns it off. Nothing
here blocks the loop: the child and the probe are awaited, the process scan runs in a
thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.codex_probe import (
    BINARY,
    codex_home,
    managed_cli,
    thread_state,
    tui_holds,
)
from agentmonitors.daemon.live_waits import next_due
from agentmonitors.delivery.codex_home import session_home
from agentmonitors.delivery.heartbeats import write_heartbeat
from agentmonitors.delivery.transports.codex_queue import TRANSPORT, wake_key
from agentmonitors.delivery.transports.health import same_path
from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.paths import neutral_cwd
from agentmonitors.workspace import WAKE_ALL, live_setting, read_local_state, wake_setting

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

__all__ = ["CodexWaker"]

log = get_logger(__name__)

RETRY_S = 2.0
"""A session whose pending set has not changed is tried again after this long."""
QUEUE_TIMEOUT_S = 15.0
HEARTBEAT_TTL_MS = 86_400_000


class CodexWaker:
    """Wakes this workspace's idle Codex threads; :meth:`run` until ``stop`` is set."""

    def __init__(
        self,
        service: DeliveryService,
        workspace: str,
        socket_path: str,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.service = service
        self.workspace = workspace
        self.socket_path = socket_path
        self.environ = dict(os.environ if environ is None else environ)
        self.home = codex_home(self.environ)
        self.path_cli = shutil.which(BINARY, path=self.environ.get("PATH"))
        self._tried: dict[str, tuple[tuple[str, ...], float]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nudged = asyncio.Event()
        self.next_look_s: float | None = None

    def nudge(self) -> None:
        """Look now rather than at the next poll (a tick stored events); any thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._nudged.set)

    async def run(self, stop: asyncio.Event) -> None:
        self._loop = asyncio.get_running_loop()
        while not stop.is_set():
            self._nudged.clear()
            try:
                await self.wake_idle()
            except Exception:
                log.warning("waking idle Codex threads failed", exc_info=True)
                self.next_look_s = RETRY_S
            # Asleep until a nudge, or until time alone makes something deliverable.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._nudged.wait(), self.next_look_s)

    def _look_again_in(self, seconds: float) -> None:
        if self.next_look_s is None or seconds < self.next_look_s:
            self.next_look_s = max(0.0, seconds)

    async def wake_idle(self) -> int:
        """One pass; returns how many threads were woken. Sets :attr:`next_look_s`, when
        the next pass is due without a nudge (None: only a nudge)."""
        self.next_look_s = None
        leads = [
            session
            for session in self.service.list_sessions()
            if TRANSPORT.serves(session) and same_path(session.get("workspacePath"), self.workspace)
        ]
        state = read_local_state(self.workspace)
        if not leads or live_setting(state.live) is False:
            return 0
        # ``wake: high`` leaves the normal reminder to the next prompt's hook.
        normal_wakes = "normal" in (wake_setting(state.wake) or WAKE_ALL)
        woken = 0
        for session in leads:
            pending = wake_key(self.service, session["id"], normal_wakes=normal_wakes)
            if not pending:
                self._tried.pop(session["id"], None)
                self._look_at_due(session["id"])
                continue
            last = self._tried.get(session["id"])
            now = time.monotonic()
            if last is not None and last[0] == pending and now - last[1] < RETRY_S:
                self._look_again_in(last[1] + RETRY_S - now)
                continue
            self._tried[session["id"]] = (pending, now)
            # Not taken (a busy thread, no TUI): looked at again a while later.
            self._look_again_in(RETRY_S)
            woken += await self._wake(session)
        return woken

    def _look_at_due(self, session_id: str) -> None:
        """Look again when a settle window ends or a lease lapses for the session."""
        now_ms = self.service.clock.now_ms()
        _active, due_ms = next_due(self.service, session_id, now_ms)
        if due_ms is not None:
            self._look_again_in((due_ms - now_ms) / 1000)

    async def _wake(self, session: Mapping[str, Any]) -> int:
        thread = session["hostSessionId"]
        # The thread's own home, as its SessionStart recorded it; else the daemon's.
        home = session_home(thread) or self.home
        state = await thread_state(home, thread)
        if state is None or not state.idle or state.cwd is None:
            return 0
        if not await asyncio.to_thread(tui_holds, home, state.cwd):
            log.info("Codex thread %s: no TUI holds it; its hooks will deliver", thread)
            return 0
        request = {"hostSessionId": thread, "socketPath": self.socket_path}
        reply = TRANSPORT.reserve_rendered(self.service, request)
        delivery_id = reply.get("deliveryId")
        if reply.get("reservation") is None or not isinstance(delivery_id, str):
            return 0
        if not await self._queue(thread, reply["text"], home):
            self.service.release(delivery_id)
            return 0
        self.service.channel_sent(delivery_id)
        write_heartbeat(
            TRANSPORT.name,
            thread,
            workspace=self.workspace,
            socket_path=self.socket_path,
            host_session_id=thread,
            session_id=session["id"],
            ttl_ms=HEARTBEAT_TTL_MS,
            delivered=True,
        )
        return 1

    async def _queue(self, thread: str, text: str, home: str) -> bool:
        """``codex queue`` for ``thread`` under ``home``; True when it exits 0 in time."""
        cli = managed_cli(home) or self.path_cli
        if cli is None:
            log.warning("no Codex CLI to queue a wake for %s: the hooks will deliver", thread)
            return False
        started = time.monotonic()
        try:
            child = await asyncio.create_subprocess_exec(
                cli,
                "queue",
                "--thread",
                thread,
                "--message",
                text,
                env={**self.environ, "CODEX_HOME": home},
                cwd=neutral_cwd(self.workspace),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            log.warning("codex queue could not start: %s", error)
            return False
        try:
            out, err = await asyncio.wait_for(child.communicate(), QUEUE_TIMEOUT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
            log.warning("codex queue for %s timed out after %.0f s", thread, QUEUE_TIMEOUT_S)
            return False
        if child.returncode != 0:
            log.warning(
                "codex queue for %s exited %s: %s",
                thread,
                child.returncode,
                (err or out).decode(errors="replace")[-500:],
            )
            return False
        log.info("queued a wake for Codex thread %s in %.2f s", thread, time.monotonic() - started)
        return True

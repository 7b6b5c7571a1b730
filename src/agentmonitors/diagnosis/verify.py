"""``verify``: prove one monitor end to end, from a real change to the delivered text.

Stages run in order against a real daemon process: ``daemon`` (a throwaway one),
``session`` (a throwaway lead), ``baseline`` (its first observation), ``trigger`` (a
change), ``observe`` (an observation that emits), ``materialize`` (the event in the
session's inbox) and ``deliver`` (the claim a hook would make, and its text). Every
wait has a budget derived from the monitor (``verify_budget``); cleanup always runs.

The daemon client is injected (``Ipc``): this package sits below ``daemon``.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from typing import Any

from agentmonitors.diagnosis.verify_budget import Budget
from agentmonitors.diagnosis.verify_daemon import VerifyDaemon
from agentmonitors.diagnosis.verify_result import (
    STAGES,
    Failed,
    Interrupted,
    NoProgress,
    Progress,
    Stage,
    VerifyResult,
    setup_failure,
)
from agentmonitors.diagnosis.verify_trigger import FileTrigger, TriggerError, run_trigger_command
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.store.suppressions import is_synthetic

BOOT_ALLOWANCE_S = 15.0
POLL_S = 0.1
DEATH_GRACE_S = 1.0
HISTORY_LIMIT = 50

Ipc = Callable[[str, str, dict[str, Any]], Any]
"""``call(socket, method, params)``: one request to a daemon."""


@dataclass
class Trigger:
    """What changes the world: a file (auto), a shell command, or the operator."""

    file: FileTrigger | None = None
    command: str | None = None

    @property
    def manual(self) -> bool:
        return self.file is None and self.command is None


@dataclass
class Verifier:
    monitor: MonitorDefinition
    budget: Budget
    workspace: str
    daemon: VerifyDaemon
    trigger: Trigger
    call: Ipc
    ping: Callable[[str], bool]
    timeout_ms: int | None = None
    # The workspace's own daemon when it runs beside a throwaway one: it sees the same
    # trigger, and must not tell the real sessions about it (see ``_shield``).
    bystander_socket: str | None = None
    progress: Progress = field(default_factory=NoProgress)
    clock: Callable[[], float] = time.monotonic
    stages: list[Stage] = field(default_factory=lambda: [Stage(name) for name in STAGES])
    _started: float = 0.0
    _deadline: float | None = None
    _hard_cap: float | None = None
    _seen: set[str] = field(default_factory=set)
    _host_session_id: str = ""
    _session_id: str = ""
    _earlier_events: set[str] = field(default_factory=set)
    _triggered: bool = False
    _triggered_at: float = 0.0
    _allowance_s: float = 0.0
    _bystander_earlier: set[str] | None = None

    # ------------------------------------------------------------------ run

    def run(self) -> VerifyResult:
        self._started = self.clock()
        result = VerifyResult(self.monitor.id, self.stages)
        try:
            result.additional_context = self._stages()
        except Failed as failure:
            result.failure = failure
        except Interrupted as interrupted:
            result.failure = Failed(
                "setup", f"interrupted by {interrupted.signal_name}; the run was cleaned up"
            )
        finally:
            self._mark_failed(result.failure)
            self._cleanup()
            result.daemon_stderr = self.daemon.output()
            self.daemon.remove()
            result.elapsed_ms = int((self.clock() - self._started) * 1000)
            self._show(None)
        return result

    def _stages(self) -> str:
        self._run_daemon()
        self._open_session()
        self._baseline()
        self._apply_trigger()
        self._observe()
        urgency = self._materialize()
        return self._deliver(urgency)

    def _cleanup(self) -> None:
        if self.trigger.file is not None:
            with contextlib.suppress(OSError):
                self.trigger.file.revert()
        if self.daemon.keeps_running:
            with contextlib.suppress(Exception):
                self._retract()
        if self.bystander_socket is not None:
            with contextlib.suppress(Exception):
                self._unshield(self.bystander_socket)
        self.daemon.stop()

    def _shield(self, socket: str) -> None:
        """Keep this run's trigger from the real sessions of a daemon that also sees it.

        Before the change: a scratch file's key gets a tombstone in that daemon, so its
        events are deleted in the tick that stores them; for a real file, the events
        that daemon already has are noted, so ``_unshield`` takes back exactly the new.
        """
        trigger = self.trigger.file
        if trigger is None:
            return
        if trigger.created and is_synthetic(trigger.path):
            self.call(
                socket,
                "events.suppressObject",
                {**self._scratch_key(), "ttlMs": self._tombstone_ms()},
            )
            return
        earlier = self.call(socket, "events.list", {"monitorId": self.monitor.id}) or []
        self._bystander_earlier = {event["id"] for event in earlier if isinstance(event, dict)}

    def _unshield(self, socket: str) -> None:
        """After the revert: retract what that daemon stored of this run's trigger."""
        trigger = self.trigger.file
        if trigger is None or not self._triggered:
            return

        def ask(method: str, params: dict[str, Any]) -> Any:
            return self.call(socket, method, params)

        if trigger.created and is_synthetic(trigger.path):
            ask("events.retractObject", self._scratch_key())
        elif self._bystander_earlier is not None:
            # Its rows were never watched here: the restore is the first row after now.
            seen = {row["id"] for row in self._history(ask)}
            self._retract_new_events(ask, seen, self._bystander_earlier)

    def _retract_new_events(
        self, ask: Callable[[str, dict[str, Any]], Any], seen: set[str], earlier: set[str]
    ) -> None:
        """Once a daemon observed the restore (a row not in ``seen``, or the baseline
        budget passed), retract this monitor's events that were not in ``earlier``."""
        deadline = self.clock() + self.budget.baseline_ms / 1000
        while self.clock() < deadline:
            if any(row["id"] not in seen for row in self._history(ask)):
                break
            time.sleep(POLL_S)
        events = ask("events.list", {"monitorId": self.monitor.id}) or []
        ours = [
            event["id"]
            for event in events
            if isinstance(event, dict) and event["id"] not in earlier
        ]
        if ours:
            ask("events.retractObject", {"monitorId": self.monitor.id, "eventIds": ours})

    def _scratch_key(self) -> dict[str, Any]:
        assert self.trigger.file is not None
        return {
            "monitorId": self.monitor.id,
            "objectKey": self.trigger.file.path,
            "workspacePath": self.workspace,
        }

    def _tombstone_ms(self) -> int:
        budget = self.budget
        return max(60_000, budget.detect_ms + budget.interval_ms + budget.settle_ms)

    def _retract(self) -> None:
        """Take back from the workspace daemon what this run put into real sessions.

        A scratch file's key gets a tombstone that outlives the observation of its
        removal; a real file's (a literal glob) events are retracted by id, after the
        observation of the restore, so only this run's events go.
        """
        if self._session_id:
            self._ipc("session.close", {"sessionId": self._session_id})
        trigger = self.trigger.file
        if trigger is None or not self._triggered:
            return
        if trigger.created and is_synthetic(trigger.path):
            key = self._scratch_key()
            self._ipc("events.suppressObject", {**key, "ttlMs": self._tombstone_ms()})
            self._ipc("events.retractObject", key)
            return
        self._retract_new_events(self._ipc, self._seen, self._earlier_events)

    # ------------------------------------------------------------------ stages

    def _run_daemon(self) -> None:
        stage = self._begin("daemon", "starting the daemon")
        self.daemon.start()
        if not self.daemon.wait_ready(self.ping, self.clock() + BOOT_ALLOWANCE_S):
            code = self.daemon.exited()
            if code is not None:
                raise Failed("daemon-died", f"the daemon exited with code {code} before answering")
            raise Failed("daemon-died", f"the daemon did not answer within {BOOT_ALLOWANCE_S:.0f}s")
        if self.daemon.keeps_running:
            attach = getattr(self.daemon, "attach", None)
            if attach is not None:
                attach(lambda: self._ipc("status", {}))
        mode = "the workspace daemon" if self.daemon.keeps_running else "a throwaway daemon"
        self._pass(stage, f"{mode}, pid {self.daemon.running_pid() or '?'}")

    def _open_session(self) -> None:
        stage = self._begin("session", "opening a throwaway lead session")
        self._host_session_id = "agentmonitors-verify-" + secrets.token_hex(6)
        reply = self._ipc(
            "session.open",
            {
                "hostSessionId": self._host_session_id,
                "role": "lead",
                "workspacePath": self.workspace,
                # Not the workspace's .agentmonitors/sessions: verify leaves no trace there.
                "hookStatePath": self.daemon.hook_state_path,
            },
        )
        self._session_id = str((reply or {}).get("id", ""))
        if not self._session_id:
            raise Failed("setup", "the daemon opened no session")
        self._pass(stage, f"lead {self._session_id}")

    def _baseline(self) -> None:
        stage = self._begin("baseline", "waiting for the first observation")
        self._allow(self.budget.baseline_ms / 1000)
        while True:
            rows = self._history()
            if rows:
                self._seen.update(row["id"] for row in rows)
                if rows[-1].get("result") == "errored":
                    raise Failed("setup", "the first observation failed: " + _error_of(rows[-1]))
                self._pass(stage, f"first observation: {rows[-1]['result']}")
                return
            self._wait("baseline", f"no observation within {self._budget_s()}")

    def _apply_trigger(self) -> None:
        stage = self._begin("trigger", "changing something")
        now = self.clock()
        if self.timeout_ms is not None:
            self._hard_cap = now + self.timeout_ms / 1000
        self._allow(self.budget.observe_ms / 1000)
        # Events from before the change (a schedule may fire at baseline) prove nothing.
        earlier = self._ipc("events.list", {"monitorId": self.monitor.id}) or []
        self._earlier_events = {event["id"] for event in earlier if isinstance(event, dict)}
        if self.bystander_socket is not None:
            with contextlib.suppress(Exception):
                self._shield(self.bystander_socket)
        self._triggered = True
        self._triggered_at = self.clock()
        trigger = self.trigger
        if trigger.file is not None:
            trigger.file.apply()
            self._pass(stage, trigger.file.describe(self.workspace))
        elif trigger.command is not None:
            try:
                run_trigger_command(trigger.command, self.workspace, self._remaining())
            except TriggerError as error:
                raise Failed(error.kind, str(error)) from None
            self._pass(stage, f"ran: {trigger.command}")
        else:
            self._pass(stage, f"manual: change something within {self._budget_s()}")

    def _observe(self) -> None:
        stage = self._begin("observe", "waiting for an observation that emits")
        unchanged: set[str] = set()
        settling = False
        while True:
            for row in reversed(self._history()):
                if row["id"] in self._seen:
                    continue
                self._seen.add(row["id"])
                outcome = row.get("result")
                if outcome == "errored" and _emitted(row):
                    # A failing run that still emitted (a command's ``Command failing``):
                    # that event is what the session receives.
                    outcome = "triggered"
                if outcome == "triggered":
                    waited = self.clock() - self._triggered_at
                    self._pass(stage, f"triggered {waited:.1f}s after the change")
                    return
                if outcome == "no-files-matched":
                    raise Failed("no-files-matched", self._no_files_message())
                if outcome == "suppressed":
                    # Seen and held by the notify policy: quiet observations that follow
                    # are the settling, not a change that went unseen.
                    settling = True
                    stage.detail = "settling: the change was seen, its notify policy holds it"
                elif outcome == "no-change" and not self.trigger.manual and not settling:
                    unchanged.add(row["id"])
                    if len(unchanged) >= 2:
                        raise Failed(
                            "no-change", "two observations after the trigger saw no change"
                        )
                elif outcome == "errored":
                    stage.detail = "observation errored: " + _error_of(row)
            self._wait("observe", f"no change observed within {self._budget_s()}")

    def _materialize(self) -> str:
        stage = self._begin("materialize", "waiting for the event in the session's inbox")
        self._allow(self.budget.deliver_ms / 1000)
        while True:
            events = [
                event
                for event in self._events(unread_only=True)
                if event["id"] not in self._earlier_events
            ]
            if events:
                event = events[0]
                urgency = str(event.get("urgency") or "normal")
                self._pass(stage, f"event {event.get('id')} ({urgency})")
                return urgency
            self._wait("materialize", f"no event reached the session within {self._budget_s()}")

    def _deliver(self, urgency: str) -> str:
        lifecycle = "turn-interruptible" if urgency == "high" else "post-compact"
        stage = self._begin("deliver", f"claiming at {lifecycle}")
        while True:
            reply = self._ipc(
                "delivery.reserveRendered",
                {
                    "transport": "hook",
                    "hostSessionId": self._host_session_id,
                    "lifecycle": lifecycle,
                    "socketPath": self.daemon.socket_path,
                },
            )
            reservation = reply.get("reservation") if isinstance(reply, dict) else None
            text = str(reply.get("text") or "") if isinstance(reply, dict) else ""
            if reservation is not None and text:
                self._ipc("hook.commit", {"reservationId": reservation["reservationId"]})
                self._pass(stage, f"{lifecycle}: {len(text)} characters")
                return text
            if reservation is not None:
                self._ipc("hook.release", {"reservationId": reservation["reservationId"]})
            if self.clock() >= self._effective_deadline():
                raise Failed("delivery-empty", f"the {lifecycle} claim delivered nothing")
            self._wait("deliver", "")

    # ------------------------------------------------------------------ helpers

    def _no_files_message(self) -> str:
        config = self.monitor.source_config
        globs = config.get("globs", config.get("paths"))
        shown = ", ".join(globs) if isinstance(globs, list) else str(globs or "")
        return f"the monitor's globs ({shown}) match no file" if shown else "no file matched"

    def _begin(self, name: str, detail: str) -> Stage:
        stage = next(item for item in self.stages if item.name == name)
        stage.detail = detail
        self._show(stage)
        return stage

    def _pass(self, stage: Stage, detail: str) -> None:
        stage.status, stage.detail = "pass", detail
        self._show(stage)

    def _mark_failed(self, failure: Failed | None) -> None:
        if failure is None:
            return
        current = next((stage for stage in self.stages if stage.status == "pending"), None)
        if current is not None:
            current.status = "fail"
            current.detail = failure.message
        for stage in self.stages:
            if stage.status == "pending":
                stage.status, stage.detail = "skip", ""

    def _show(self, stage: Stage | None) -> None:
        remaining = None if self._deadline is None else max(0.0, self._remaining())
        self.progress.update(self.stages, self._since_start(), remaining)

    def _since_start(self) -> float:
        return self.clock() - self._started

    def _effective_deadline(self) -> float:
        deadline = self._deadline if self._deadline is not None else self.clock()
        return deadline if self._hard_cap is None else min(deadline, self._hard_cap)

    def _remaining(self) -> float:
        return self._effective_deadline() - self.clock()

    def _budget_s(self) -> str:
        return f"{self._allowance_s:.0f}s"

    def _allow(self, seconds: float) -> None:
        """Start a stage's wait: ``seconds`` from now, never past ``--timeout-ms``."""
        self._allowance_s = seconds
        self._deadline = self.clock() + seconds

    def _wait(self, stage: str, message: str) -> None:
        """Sleep one poll; fail when the daemon is gone or the budget is spent."""
        self._check_daemon()
        if self._remaining() <= 0:
            capped = self._hard_cap is not None and self._hard_cap <= (self._deadline or 0)
            reason = " (--timeout-ms)" if capped else ""
            raise Failed("budget-exceeded", f"{stage}: {message}{reason}")
        self._show(None)
        time.sleep(POLL_S)

    def _check_daemon(self) -> None:
        code = self.daemon.exited()
        if code is not None:
            raise Failed("daemon-died", f"the daemon exited with code {code}")

    def _events(self, *, unread_only: bool) -> list[dict[str, Any]]:
        query = {"sessionId": self._session_id, "monitorId": self.monitor.id}
        events = self._ipc("events.list", {**query, "unreadOnly": unread_only})
        return [event for event in events or () if isinstance(event, dict) and "id" in event]

    def _history(
        self, ask: Callable[[str, dict[str, Any]], Any] | None = None
    ) -> list[dict[str, Any]]:
        """The monitor's recent observation rows, from this run's daemon unless ``ask``
        names another."""
        request = ask or self._ipc
        rows = request("history.list", {"monitorId": self.monitor.id, "limit": HISTORY_LIMIT})
        return [row for row in rows or () if isinstance(row, dict) and "id" in row]

    def _ipc(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return self.call(self.daemon.socket_path, method, params)
        except Exception as error:
            # A daemon killed mid-request resets the connection a moment before it can be
            # reaped: give its exit a second to show before blaming the request.
            deadline = self.clock() + DEATH_GRACE_S
            while self.daemon.exited() is None and self.clock() < deadline:
                time.sleep(0.02)
            self._check_daemon()
            raise Failed("setup", f"{method} failed: {error}") from None


def _emitted(row: dict[str, Any]) -> bool:
    data = row.get("observationData")
    emitted = data.get("emitted") if isinstance(data, dict) else None
    return isinstance(emitted, int) and emitted > 0


def _error_of(row: dict[str, Any]) -> str:
    data = row.get("observationData")
    if isinstance(data, dict):
        for key in ("error", "message"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return "see the daemon's output"


__all__ = ["Interrupted", "Trigger", "Verifier", "VerifyResult", "setup_failure"]

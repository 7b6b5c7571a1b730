"""What a ``verify`` run reports: its stages, its failure (a kind and a message), its result."""

from __future__ import annotations

from typing import Any, Protocol

from agentmonitors.fastpath.lean_dataclass import dataclass

STAGES = ("daemon", "session", "baseline", "trigger", "observe", "materialize", "deliver")
KINDS = (
    "no-change",
    "no-files-matched",
    "budget-exceeded",
    "daemon-died",
    "delivery-empty",
    "setup",
)


class Failed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; raised from the signal handler, cleanup still runs."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


@dataclass
class Stage:
    name: str
    status: str = "pending"
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


class Progress(Protocol):
    def update(self, stages: list[Stage], elapsed_s: float, remaining_s: float | None) -> None: ...


class NoProgress:
    def update(self, stages: list[Stage], elapsed_s: float, remaining_s: float | None) -> None:
        return None


@dataclass
class VerifyResult:
    monitor_id: str
    stages: list[Stage]
    failure: Failed | None = None
    additional_context: str | None = None
    daemon_stderr: str = ""
    elapsed_ms: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None and all(stage.status == "pass" for stage in self.stages)

    def to_json(self) -> dict[str, Any]:
        failure = self.failure
        return {
            "ok": self.ok,
            "monitorId": self.monitor_id,
            "stages": [stage.to_json() for stage in self.stages],
            "failure": None
            if failure is None
            else {"kind": failure.kind, "message": failure.message},
            "additionalContext": self.additional_context,
            "daemonStderr": self.daemon_stderr,
            "elapsedMs": self.elapsed_ms,
        }


def setup_failure(monitor_id: str, kind: str, message: str) -> VerifyResult:
    """The result of a run that stopped before its first stage."""
    stages = [Stage(name, "skip") for name in STAGES]
    return VerifyResult(monitor_id, stages, Failed(kind, message))

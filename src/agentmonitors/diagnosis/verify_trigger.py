"""The change ``verify`` makes so a monitor has something to see, and its undoing.

A source that a file change proves makes it (``Source.verify_trigger``; file-fingerprint
does: a scratch file in the first glob's folder, or the one file its glob names, undone
afterwards, see ``sources/file_change.py``). Every other source needs ``--trigger-cmd``
or ``--manual``.
"""

from __future__ import annotations

import subprocess

from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_change import FileTrigger, TriggerProblem

TRIGGER_TAIL_CHARS = 400
"""How much of a failed --trigger-cmd's output its error quotes (its end)."""

__all__ = ["FileTrigger", "TriggerError", "auto_trigger", "run_trigger_command"]


class TriggerError(Exception):
    """The trigger could not be prepared or run; ``kind`` is the failure kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def auto_trigger(
    monitor: MonitorDefinition, workspace: str, registry: SourceRegistry
) -> FileTrigger:
    """The file change that proves ``monitor``, as its source makes it; ``TriggerError``
    when it has none (or cannot make one)."""
    source = registry.traits(monitor.source_name)
    try:
        trigger = source.verify_trigger(monitor.source_config, workspace)
    except TriggerProblem as problem:
        raise TriggerError(problem.kind, str(problem)) from None
    if trigger is None:
        raise TriggerError(
            "setup",
            f"{monitor.source_name} has no automatic trigger; pass --trigger-cmd '<sh>' "
            "or --manual",
        )
    return trigger


def run_trigger_command(command: str, workspace: str, timeout_s: float) -> None:
    """``/bin/sh -c`` in the workspace; a non-zero exit is a ``setup`` failure."""
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TriggerError(
            "setup", f"--trigger-cmd did not finish within {timeout_s:.0f}s"
        ) from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        tail = said[-TRIGGER_TAIL_CHARS:]
        if len(said) > len(tail):
            # Cut from the front (an error is said last); the command, run again by
            # hand, prints it whole.
            tail = f"(last {len(tail)} of {len(said)} characters) {tail}"
        message = f"--trigger-cmd exited with {done.returncode}"
        raise TriggerError("setup", f"{message}: {tail}" if tail else message)

"""The change ``verify`` makes so a monitor has something to see, and its undoing.

Only file-fingerprint monitors get an automatic trigger: a scratch file
``agentmonitors-verify-<token><ext>`` in the first glob's literal folder, or, for a
glob naming one file, that file created (then deleted) or edited (then restored byte
for byte, with its times). Every other source needs ``--trigger-cmd`` or ``--manual``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess

from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.file_globs import compile_patterns, resolve_base

SCRATCH_PREFIX = "agentmonitors-verify-"
TRIGGER_TAIL_CHARS = 400
"""How much of a failed --trigger-cmd's output its error quotes (its end)."""
_EXTENSION = re.compile(r"\*(\.[A-Za-z0-9_.-]+)$")


class TriggerError(Exception):
    """The trigger could not be prepared or run; ``kind`` is the failure kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class FileTrigger:
    """A scratch or literal file to change; ``revert`` leaves the folder as it was."""

    path: str
    created: bool
    original: bytes | None = None
    times: tuple[int, int] | None = None
    applied: bool = field(default=False)

    def describe(self, workspace: str) -> str:
        shown = os.path.relpath(self.path, workspace)
        return f"created {shown}" if self.created else f"edited {shown} (restored afterwards)"

    def apply(self) -> None:
        if self.created:
            with open(self.path, "x", encoding="utf-8") as handle:
                handle.write("agentmonitors verify: a scratch change, removed afterwards\n")
        else:
            with open(self.path, "ab") as handle:
                handle.write(b"\n")
        self.applied = True

    def revert(self) -> None:
        if not self.applied:
            return
        if self.created:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        elif self.original is not None:
            with open(self.path, "wb") as handle:
                handle.write(self.original)
            if self.times is not None:
                os.utime(self.path, ns=self.times)
        self.applied = False


def _globs(monitor: MonitorDefinition) -> list[str]:
    config = monitor.source_config
    value = config.get("globs", config.get("paths"))
    if isinstance(value, str):
        return [value]
    return [item for item in value or () if isinstance(item, str)]


def auto_trigger(monitor: MonitorDefinition, workspace: str) -> FileTrigger:
    """The file change that proves a file-fingerprint monitor; raises ``TriggerError``."""
    if monitor.source_name != "file-fingerprint":
        raise TriggerError(
            "setup",
            f"{monitor.source_name} has no automatic trigger; pass --trigger-cmd '<sh>' "
            "or --manual",
        )
    globs = _globs(monitor)
    cwd = monitor.source_config.get("cwd")
    base = resolve_base(cwd if isinstance(cwd, str) else None, workspace)
    try:
        patterns = compile_patterns(globs[:1], base)
    except ValueError as error:
        raise TriggerError("setup", str(error)) from None
    if not patterns:
        raise TriggerError("setup", "the monitor names no glob to trigger")
    pattern = patterns[0]
    if pattern.is_literal:
        return _literal(pattern.root)
    folder = pattern.root
    if not os.path.isdir(folder):
        raise TriggerError(
            "no-files-matched",
            f'glob "{pattern.source}" matches no file: its folder '
            f"{os.path.relpath(folder, workspace)} does not exist",
        )
    found = _EXTENSION.search(pattern.source.rsplit("/", 1)[-1])
    extension = found.group(1) if found else ".txt"
    path = os.path.join(folder, f"{SCRATCH_PREFIX}{secrets.token_hex(4)}{extension}")
    if not pattern.matches(path):
        raise TriggerError(
            "setup",
            f'cannot name a scratch file that glob "{pattern.source}" matches; '
            "pass --trigger-cmd '<sh>' to make a change yourself",
        )
    return FileTrigger(path=path, created=True)


def _literal(path: str) -> FileTrigger:
    if not os.path.exists(path):
        if not os.path.isdir(os.path.dirname(path)):
            raise TriggerError(
                "no-files-matched", f"{path} does not exist and neither does its folder"
            )
        return FileTrigger(path=path, created=True)
    if not os.path.isfile(path):
        raise TriggerError("setup", f"{path} is not a regular file")
    with open(path, "rb") as handle:
        original = handle.read()
    status = os.stat(path)
    return FileTrigger(
        path=path,
        created=False,
        original=original,
        times=(status.st_atime_ns, status.st_mtime_ns),
    )


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

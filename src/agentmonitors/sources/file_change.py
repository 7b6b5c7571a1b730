"""A file change ``verify`` makes so a monitor has something to see, and its undoing.

A source whose monitors a file change proves (``Source.verify_trigger``) returns one of
these; ``verify`` applies it once the baseline is recorded and reverts it afterwards,
whatever happened in between, so the project is left as it was.
"""

from __future__ import annotations

import contextlib
import os

from agentmonitors.fastpath.lean_dataclass import dataclass, field


class TriggerProblem(Exception):
    """No change can be prepared; ``kind`` is ``verify``'s failure kind for it."""

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


def literal_trigger(path: str) -> FileTrigger:
    """The change to one named file: created (then deleted) or edited (then restored
    byte for byte, with its times); ``TriggerProblem`` when neither can be done."""
    if not os.path.exists(path):
        if not os.path.isdir(os.path.dirname(path)):
            raise TriggerProblem(
                "no-files-matched", f"{path} does not exist and neither does its folder"
            )
        return FileTrigger(path=path, created=True)
    if not os.path.isfile(path):
        raise TriggerProblem("setup", f"{path} is not a regular file")
    with open(path, "rb") as handle:
        original = handle.read()
    status = os.stat(path)
    return FileTrigger(
        path=path,
        created=False,
        original=original,
        times=(status.st_atime_ns, status.st_mtime_ns),
    )

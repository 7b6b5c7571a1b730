"""Running one command-poll command: argv only, bounded capture, process-group kill.

The command is spawned directly (never through a shell) with stdin
closed, stdout/stderr piped and the child leading its own session, so its process
group holds every descendant that did not leave it. Both pipes are drained to EOF;
the caps only bound what is *kept* (the head of stdout, the tail of stderr), never
what is read, so a chatty command can neither block on a full pipe nor be killed for
talking. On timeout the whole group gets SIGTERM, and SIGKILL
:data:`SIGKILL_GRACE_S` later even if the direct child is already gone (a descendant
that ignores SIGTERM must not survive); the run then resolves on the direct child's
exit, not on pipe EOF, since a lingering descendant can hold the pipes open. After a
normal exit the pipes get :data:`CLOSE_GRACE_S` to close before what was captured is
used.

Nothing the run started outlives it: before the outcome is returned, whatever is left
in the group (a descendant that ignored SIGTERM, or a background job of a command that
exited normally) gets SIGTERM, then SIGKILL once the grace is over. This happens in the
same thread, not on a timer, so a one-shot ``daemon once`` that exits right after its
observation cannot leave a process behind.

What a run gives (:class:`CommandResult`, :class:`CommandFailure`) and the caps live
in ``outcome.py``. The blocking work runs in a worker thread (``asyncio.to_thread``):
one thread per run multiplexes both pipes with a selector and polls the child.
Cancelling the awaiting task kills the group and closes the pipes. POSIX only
(selectors over pipes and process groups); Windows is not supported by this runner.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Literal

from agentmonitors.sources.command_poll.outcome import (
    STDERR_RETAINED_BYTES,
    STDOUT_CAP_BYTES,
    CommandFailure,
    CommandOutcome,
    CommandResult,
)
from agentmonitors.sources.permit import Permit

SIGKILL_GRACE_S = 5.0
CLOSE_GRACE_S = 2.0
_READ_CHUNK = 65_536
# How often the child is polled for exit while its pipes are quiet.
_POLL_S = 0.02


async def run_command(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    timeout_ms: int,
    permit: Permit,
) -> CommandOutcome:
    """Run ``argv`` off the event loop and report its result or failure.

    The one place a monitor's command starts, so the approval is checked here, against
    exactly what is about to run (``NotApproved`` when ``permit`` does not cover it).
    """
    # Lazy: asyncio costs a third of `validate`, which loads this module but runs nothing.
    import asyncio

    permit.check_run(argv, cwd)
    abort = threading.Event()
    try:
        return await asyncio.to_thread(
            _run_blocking, list(argv), cwd, dict(env) if env else None, timeout_ms, abort
        )
    except asyncio.CancelledError:
        abort.set()
        raise


def _spawn_error(argv0: str, error: OSError) -> str:
    code = errno.errorcode.get(error.errno or 0)
    reason = error.strerror or str(error)
    text = f"Cannot run {argv0}: {reason}"
    if code:
        text += f" ({code})"
    if error.filename is not None and str(error.filename) != argv0:
        text += f": {error.filename}"
    return text


def _signal_group(pid: int, signum: signal.Signals) -> None:
    # An empty group (everyone already gone) is not an error.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


class _Capture:
    """Bounded keepers for the two streams."""

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.truncated = False
        self.stderr = bytearray()

    def take(self, is_stdout: bool, chunk: bytes) -> None:
        if is_stdout:
            room = STDOUT_CAP_BYTES - len(self.stdout)
            if len(chunk) > room:
                self.truncated = True
                chunk = chunk[: max(room, 0)]
            self.stdout += chunk
        else:
            self.stderr += chunk
            if len(self.stderr) > STDERR_RETAINED_BYTES:
                del self.stderr[: len(self.stderr) - STDERR_RETAINED_BYTES]

    def stdout_text(self) -> str:
        if not self.truncated:
            return self.stdout.decode("utf-8", errors="replace")
        # The cap may cut a character in two: leave its first bytes out.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(bytes(self.stdout), final=False)

    def stderr_tail(self) -> str:
        data = bytes(self.stderr)
        # The retention window may start inside a character: skip its continuation bytes.
        start = 0
        while start < min(len(data), 3) and 0x80 <= data[start] <= 0xBF:
            start += 1
        return data[start:].decode("utf-8", errors="replace")


def _run_blocking(
    argv: list[str],
    cwd: str | None,
    env: dict[str, str] | None,
    timeout_ms: int,
    abort: threading.Event,
) -> CommandOutcome:
    merged = {**os.environ, **env} if env else None
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=merged,
            start_new_session=True,
        )
    except OSError as error:
        return CommandFailure(_spawn_error(argv[0], error), "")
    capture = _Capture()
    group = _Group(process.pid)
    try:
        status = _pump(process, capture, timeout_ms / 1000, abort, group)
    finally:
        group.end()
    if status == "cancelled":
        return CommandFailure("Command cancelled", capture.stderr_tail())
    if status == "timed-out":
        return CommandFailure(f"Command timed out after {timeout_ms}ms", capture.stderr_tail())
    code = process.returncode
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return CommandFailure(f"Command terminated by signal {name}", capture.stderr_tail())
    return CommandResult(capture.stdout_text(), code, capture.truncated, capture.stderr_tail())


def _pump(
    process: subprocess.Popen[bytes],
    capture: _Capture,
    timeout_s: float,
    abort: threading.Event,
    group: _Group,
) -> Literal["exited", "timed-out", "cancelled"]:
    """Drain both pipes into ``capture`` until the run is decided; close them after."""
    assert process.stdout is not None
    assert process.stderr is not None
    stdout_fd = process.stdout.fileno()
    streams = {stdout_fd: process.stdout, process.stderr.fileno(): process.stderr}
    selector = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    timed_out = False
    exited_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if abort.is_set():
                group.kill()
                process.wait()
                return "cancelled"
            if process.poll() is not None:
                # After a timeout the direct child's exit decides; otherwise EOF on
                # both pipes, or the close grace if a descendant keeps them open.
                if timed_out:
                    return "timed-out"
                if not streams:
                    return "exited"
                exited_at = now if exited_at is None else exited_at
                if now - exited_at >= CLOSE_GRACE_S:
                    return "exited"
            elif not timed_out and now >= deadline:
                timed_out = True
                group.terminate()
                continue
            elif timed_out:
                group.kill_if_overdue()
            if not streams:
                time.sleep(_POLL_S)
                continue
            for key, _ in selector.select(_POLL_S):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    continue
                if chunk:
                    capture.take(fd == stdout_fd, chunk)
                else:
                    selector.unregister(fd)
                    streams.pop(fd).close()
    finally:
        selector.close()
        for stream in streams.values():
            stream.close()


def _has_running_member(pgid: int) -> bool:
    """Whether a member of ``pgid`` still runs; a zombie waiting for its reaper does not.

    An orphaned descendant is reaped by init (or a subreaper) on its own schedule, and
    ``killpg(pgid, 0)`` counts it until then. Where ``/proc`` is missing, every member
    counts as running.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp.
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


class _Group:
    """The run's process group (led by the direct child): SIGTERM, then SIGKILL after
    :data:`SIGKILL_GRACE_S`, counted from the first SIGTERM."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.kill_at: float | None = None
        self.killed = False

    def terminate(self) -> None:
        if self.kill_at is None:
            _signal_group(self.pgid, signal.SIGTERM)
            self.kill_at = time.monotonic() + SIGKILL_GRACE_S

    def kill(self) -> None:
        _signal_group(self.pgid, signal.SIGKILL)
        self.killed = True

    def kill_if_overdue(self) -> None:
        if not self.killed and self.kill_at is not None and time.monotonic() >= self.kill_at:
            self.kill()

    def alive(self) -> bool:
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return _has_running_member(self.pgid)

    def end(self) -> None:
        """Return only once nobody is left in the group (bounded by the grace)."""
        if not self.alive():
            return
        self.terminate()
        while not self.killed:
            if not self.alive():
                return
            self.kill_if_overdue()
            time.sleep(_POLL_S)
        # SIGKILL cannot be ignored; give the kernel a moment to take them down.
        settle_until = time.monotonic() + 0.5
        while self.alive() and time.monotonic() < settle_until:
            time.sleep(_POLL_S)

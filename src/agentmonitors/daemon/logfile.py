"""The daemon's log: one bounded, deduplicated, scrubbed writer for all it prints.

A background daemon's stdout and stderr are its log from the first byte (a crash
before this module is set up still lands there). Once set up, everything it writes
goes through :class:`DaemonLog` (docs/architecture.md, "The daemon's log"):

* **Bounded.** :class:`LogFile` moves the file to ``<log>.1`` (replacing the previous
  one) before a write would take it past its size, and points the raw descriptors 1
  and 2 at the new file, so what bypasses Python's streams follows it too; a second
  check each second catches what those raw writes added.
* **Repeats counted.** A warning or error that comes again within a minute of its
  first appearance (same logger, level, message template and exception type) is
  counted, not written; when the minute is over, or at shutdown, one line says
  ``… repeated N times``.
* **Scrubbed.** Credentials go through :func:`sources.redact.redact_text`; any run of
  more than 64 characters without a space or a slash (a session id, a token, a
  caller's string) is cut to its start and its length; control characters are
  escaped, and a log record's message keeps to one line, so a caller's text cannot
  forge a line; a record is cut to 4,000 characters.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import re
import sys
import time
from collections.abc import Callable

from agentmonitors.daemon.logstamp import StampingWriter, iso_now, stamp_when_logging_to_a_file
from agentmonitors.daemon.spawn import log_max_bytes
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.formats import clean_output
from agentmonitors.sources.redact import redact_text

REPEAT_WINDOW_S = 60.0
MAX_RECORD_CHARS = 4000
# Longer runs without a space or a slash are not words a reader needs in full.
_LONG_RUN = re.compile(r"[^\s/\\'\"]{65,}")
_KEEP_OF_RUN = 16


def scrub(text: str, *, one_line: bool = False) -> str:
    """``text`` fit for the log: credentials masked, long runs cut, controls escaped."""
    text = redact_text(text)
    text = _LONG_RUN.sub(
        lambda match: f"{match.group()[:_KEEP_OF_RUN]}…[{len(match.group())}]", text
    )
    if one_line:
        text = text.replace("\n", "\\n")
    text = clean_output(text)
    if len(text) > MAX_RECORD_CHARS:
        head, tail = MAX_RECORD_CHARS // 2, MAX_RECORD_CHARS // 4
        cut = len(text) - head - tail
        text = f"{text[:head]}\n… {cut} characters cut …\n{text[-tail:]}"
    return text


class LogFile:
    """Appends to ``path``; before a write would take it past ``max_bytes``, starts afresh.

    The full file becomes ``<path>.1``. Each descriptor in ``std_fds`` (the process's
    stdout and stderr) is pointed at the current file, so a traceback the interpreter
    writes straight to descriptor 2 lands in the live log, never in the moved one.
    """

    def __init__(self, path: str, max_bytes: int, std_fds: tuple[int, ...] = (1, 2)) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._std_fds = std_fds
        self.fd = self._open()

    def _open(self) -> int:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        for target in self._std_fds:
            os.dup2(fd, target)
        return fd

    def _size(self) -> int:
        try:
            return os.fstat(self.fd).st_size
        except OSError:
            return 0

    def write(self, data: bytes) -> None:
        size = self._size()
        if size and size + len(data) > self.max_bytes:
            self.rotate()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def check(self) -> None:
        """Start afresh when raw writes took the file past its size."""
        if self._size() > self.max_bytes:
            self.rotate()

    def rotate(self) -> None:
        """``<path>`` becomes ``<path>.1``; a new ``<path>`` takes its place."""
        with contextlib.suppress(OSError):
            # Moved already (a start found it too large): leave the new file be.
            if os.path.samestat(os.fstat(self.fd), os.stat(self.path)):
                os.replace(self.path, self.path + ".1")
        old = self.fd
        try:
            self.fd = self._open()
        except OSError:
            return  # keep writing where we were rather than lose the line
        os.close(old)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


@dataclass
class _Repeat:
    first_at: float
    line: str
    count: int = 0


class DaemonLog:
    """Everything the daemon writes: its own lines (``out``) and its log records.

    ``write_out`` and ``write_err`` take finished text; for a log file both are the
    file, for a terminal they are stdout and stderr.
    """

    def __init__(
        self,
        write_out: Callable[[str], None],
        write_err: Callable[[str], None],
        *,
        file: LogFile | None = None,
        window_s: float = REPEAT_WINDOW_S,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write_out = self._unless_full(write_out)
        self._write_err = self._unless_full(write_err)
        self.dropped = 0
        """Lines lost to a full disk since the last one written (docs/durability.md)."""
        self.file = file
        self._window_s = window_s
        self._now = now
        self._repeats: dict[tuple[str, int, str, str], _Repeat] = {}
        # Set by :meth:`maintain`: wakes it when a repeat window opens (any thread).
        self._poke: Callable[[], None] | None = None

    def _unless_full(self, write: Callable[[str], None]) -> Callable[[str], None]:
        """``write``, dropping the text when the disk is full rather than stopping the
        daemon; the next line that fits says how many were lost."""

        def written(text: str) -> None:
            try:
                if self.dropped:
                    write(f"… {self.dropped} log write(s) lost: the disk was full\n")
                    self.dropped = 0
                write(text)
            except OSError:
                self.dropped += 1

        return written

    def out(self, line: str) -> None:
        """One of the daemon's own lines (listening, emitted, stopping)."""
        self._write_out(scrub(line) + "\n")

    def record(self, record: logging.LogRecord, formatter: logging.Formatter) -> None:
        """A log record: written, or counted when the same one was written lately."""
        try:
            message = record.getMessage()
        except Exception:  # a bad format string is still worth a line
            message = f"{record.msg!r} {record.args!r}"
        line = f"{record.name} {record.levelname}: {scrub(message, one_line=True)}"
        now = self._now()
        self.summarize_repeats(now)
        key = _key(record)
        if record.levelno >= logging.WARNING:
            seen = self._repeats.get(key)
            if seen is not None:
                seen.count += 1
                return
            self._repeats[key] = _Repeat(now, line)
            if self._poke is not None:
                self._poke()
        text = line
        if record.exc_info:
            text += "\n" + scrub(formatter.formatException(record.exc_info))
        elif record.exc_text:
            text += "\n" + scrub(record.exc_text)
        self._write_err(text + "\n")

    def summarize_repeats(self, now: float | None = None, *, everything: bool = False) -> None:
        """One ``… repeated N times`` line for each record whose minute is over."""
        moment = self._now() if now is None else now
        for key, seen in list(self._repeats.items()):
            if not everything and moment - seen.first_at < self._window_s:
                continue
            del self._repeats[key]
            if seen.count:
                seconds = max(1, round(moment - seen.first_at))
                times = "once more" if seen.count == 1 else f"{seen.count} times"
                self._write_err(f"… repeated {times} in {seconds} s: {seen.line}\n")

    def next_due_in(self, cap_s: float | None = None) -> float | None:
        """Seconds until the earliest pending repeat's minute is over, at most ``cap_s``
        (None: no repeat pending and no cap)."""
        if not self._repeats:
            return cap_s
        earliest = min(seen.first_at for seen in self._repeats.values())
        due = max(0.0, earliest + self._window_s - self._now())
        return due if cap_s is None else min(cap_s, due)

    def check_size(self) -> None:
        """Start the file afresh when raw writes (a C extension, a fatal error) took it
        past its size; written lines are checked as they are written."""
        if self.file is not None:
            self.file.check()

    async def maintain(self) -> None:
        """Writes each repeat summary when its minute is over. It sleeps until one is due
        or a new repeat starts (no fixed tick: an idle daemon's log never wakes it)."""
        loop = asyncio.get_running_loop()
        poked = asyncio.Event()

        def poke() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(poked.set)

        self._poke = poke
        try:
            while True:
                poked.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(poked.wait(), self.next_due_in())
                self.summarize_repeats()
                self.check_size()
        finally:
            self._poke = None

    def close(self) -> None:
        self.summarize_repeats(everything=True)
        if self.file is not None:
            self.file.check()


def _key(record: logging.LogRecord) -> tuple[str, int, str, str]:
    error = record.exc_info[0] if record.exc_info else None
    return (record.name, record.levelno, str(record.msg), error.__name__ if error else "")


class _Handler(logging.Handler):
    def __init__(self, log: DaemonLog) -> None:
        super().__init__(logging.WARNING)
        self._log = log
        self._formatter = logging.Formatter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._log.record(record, self._formatter)
        except Exception:
            self.handleError(record)


class _StampedFileWriter(io.RawIOBase):
    """``sys.stdout``/``sys.stderr`` of a daemon with a log file: scrubbed, dated lines."""

    def __init__(self, file: LogFile) -> None:
        super().__init__()
        self._file = file
        self._at_line_start = True

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._file.fd

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = bytes(data)
        self.write_text(chunk.decode("utf-8", "backslashreplace"))
        return len(chunk)

    def write_text(self, text: str) -> None:
        out: list[str] = []
        for line in scrub(text).splitlines(keepends=True):
            if self._at_line_start:
                out.append(iso_now() + " ")
            out.append(line)
            self._at_line_start = line.endswith("\n")
        self._file.write("".join(out).encode("utf-8"))


def _text_stream(writer: _StampedFileWriter) -> io.TextIOWrapper:
    return io.TextIOWrapper(
        writer,  # type: ignore[arg-type]
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
        write_through=True,
    )


def setup_daemon_log(log_path: str | None) -> DaemonLog:
    """Route the daemon's output and log records through one :class:`DaemonLog`.

    With ``log_path`` (a background daemon, or ``daemon run --log``): that file, its
    size bounded (``$AGENTMONITORS_LOG_MAX_BYTES``, default 5 MiB), with descriptors 1
    and 2 on it. Without: stdout and stderr as they are, dated when they are a file.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    if log_path is not None:
        file = LogFile(log_path, log_max_bytes())
        writer = _StampedFileWriter(file)
        for name in ("stdout", "stderr"):
            with contextlib.suppress(OSError, ValueError):
                getattr(sys, name).flush()
        sys.stdout = _text_stream(writer)
        sys.stderr = _text_stream(writer)
        log = DaemonLog(writer.write_text, writer.write_text, file=file)
    else:
        stamp_when_logging_to_a_file()

        def to(name: str, date: bool) -> Callable[[str], None]:
            def write(text: str) -> None:
                stream = getattr(sys, name)
                # A file is dated line by line already; a terminal gets dated records.
                if date and not isinstance(getattr(stream, "buffer", None), StampingWriter):
                    text = "".join(f"{iso_now()} {line}" for line in text.splitlines(True))
                stream.write(text)
                stream.flush()

            return write

        log = DaemonLog(to("stdout", False), to("stderr", True))
    root.addHandler(_Handler(log))
    return log

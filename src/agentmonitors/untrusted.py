"""What we take from places we did not write: bounded reads and the one text rule.

A leaf, standard library only and nothing heavy at import: the hook path reads the
enable file through :func:`read_bounded` and renders through :func:`clean_line` and
:func:`clean_block` (docs/architecture.md, "Text and sizes").

**Reads.** A file from a project folder (a ``MONITOR.md``, the enable file) is read
only when it is a regular file of bounded size: opened non-blocking (a FIFO cannot
hang the open), checked with ``fstat`` on the opened descriptor (a symlink swapped in
between changes nothing), and read to at most ``cap + 1`` bytes (``/dev/zero`` and a
10 GiB file cost the same few bytes).

**Text.** Every piece of text we did not write (file names, command output, HTTP
bodies, titles and summaries built from them, monitor names and bodies, what an agent
declared) is shown through one rule:

- control characters (C0 but tab and line feed, DEL, C1), bidirectional controls,
  zero-width and other invisible format characters and the line and paragraph
  separators are written as their ``\\uXXXX`` escape;
- a byte of a file name that is not UTF-8 (``os.fsdecode`` turns it into a lone
  surrogate U+DC80–U+DCFF) is written ``\\xNN``; any other lone surrogate as ``\\uXXXX``;
- a single-line field (:func:`clean_line`: a title, a name, a path inside a line) has
  its line feeds escaped too;
- a multi-line block (:func:`clean_block`: a body, a diff, a snapshot) keeps its line
  feeds (CRLF becomes LF), and a line of it that reads as one of ours (the ``AgentMon:``
  attribution, the ``### <monitor> (<urgency>)`` header, the ack line, a truncation
  marker, the reminder) is quoted with ``> `` so it can never pass for ours.
"""

from __future__ import annotations

import os
import stat

# Imports only for annotations: the hook path loads this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Match, Pattern

__all__ = [
    "ENABLE_FILE_CAP",
    "MONITOR_FILE_CAP",
    "QUOTE",
    "RefusedFile",
    "clean_block",
    "clean_line",
    "escape_in_document",
    "escape_invisible",
    "escape_undecodable",
    "guard_line",
    "read_bounded",
    "reads_as_ours",
    "restore_undecodable",
]

MONITOR_FILE_CAP = 256 * 1024
"""Largest ``MONITOR.md`` read, in bytes."""
ENABLE_FILE_CAP = 64 * 1024
"""Largest enable file (``.claude/agentmonitors.local.md``) read, in bytes."""


class RefusedFile(OSError):
    """A file we will not read: not a regular file, or over its size cap."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _size(cap: int) -> str:
    return f"{cap // 1024} KiB" if cap % 1024 == 0 else f"{cap} bytes"


def read_bounded(path: str, cap: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``cap`` of them.

    Raises :class:`RefusedFile` (an ``OSError`` whose ``strerror`` says why) for
    anything that is not a regular file or holds more than ``cap`` bytes, and the
    usual ``OSError`` when it cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RefusedFile(0, f"{_kind(mode)}, not a regular file", path)
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise RefusedFile(0, f"larger than the {_size(cap)} limit", path)
    return b"".join(chunks)


# ----------------------------------------------------------------------------- text

# Shown as an escape wherever untrusted text is shown. Line feed and tab are handled
# by the callers (a line escapes LF, a block keeps it; both keep tab).
_INVISIBLE = (
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    0x061C,  # Arabic letter mark
    0x180E,  # Mongolian vowel separator
    *range(0x200B, 0x2010),  # zero-width space, ZWNJ, ZWJ, LRM, RLM
    0x2028,  # line separator
    0x2029,  # paragraph separator
    *range(0x202A, 0x202F),  # LRE, RLE, PDF, LRO, RLO
    *range(0x2060, 0x2070),  # word joiner, invisible operators, isolates, deprecated
    0xFEFF,  # zero-width no-break space (BOM)
    *range(0xFFF9, 0xFFFC),  # interlinear annotation
)
_ASCII_TABLE = {code: f"\\u{code:04x}" for code in _INVISIBLE if code < 0x80}
_LINE_ASCII_TABLE = {**_ASCII_TABLE, 0x0A: "\\u000a"}
# Lone surrogates: os.fsdecode carries each byte of a name that is not UTF-8 as one of
# 0xDC80-0xDCFF, written ``\\xNN`` outside documents; every other one ``\\uXXXX``.
_SURROGATES = range(0xD800, 0xE000)
_UNDECODABLE_BYTES = range(0xDC80, 0xDD00)

_FINDERS: dict[str, Pattern[str]] = {}


def _finder(mode: str) -> Pattern[str]:
    """The characters ``mode`` escapes, as a class of ranges: compiling a class of every
    code point (two thousand surrogates) would cost a short command milliseconds."""
    finder = _FINDERS.get(mode)
    if finder is None:
        # Lazy: the hook path renders all-ASCII text and never loads re.
        import re

        runs: list[list[int]] = []
        for code in sorted({*_INVISIBLE, *((0x0A,) if mode == "line" else ())}):
            if runs and runs[-1][1] == code - 1:
                runs[-1][1] = code
            else:
                runs.append([code, code])
        runs.append([_SURROGATES[0], _SURROGATES[-1]])
        finder = re.compile(
            "["
            + "".join(
                re.escape(chr(low)) + ("" if low == high else "-" + re.escape(chr(high)))
                for low, high in runs
            )
            + "]"
        )
        _FINDERS[mode] = finder
    return finder


def _escape_full(text: str, mode: str) -> str:
    """The rule over non-ASCII text: a regular expression finds the few characters to
    escape (a translate table of every code point is many times slower on long text);
    ``re`` is loaded only here, off the all-ASCII path."""
    # Each character the rule escapes is one ``str.isprintable`` refuses
    # (tests/test_untrusted.py), so printable text (our own em dash) needs no pattern.
    kept = text.replace("\t", "") if mode == "line" else text.replace("\t", "").replace("\n", "")
    if kept.isprintable():
        return text
    raw_bytes = mode != "document"

    def escape(match: Match[str]) -> str:
        code = ord(match.group())
        if raw_bytes and code in _UNDECODABLE_BYTES:
            return f"\\x{code - 0xDC00:02x}"
        return f"\\u{code:04x}"

    return str(_finder(mode).sub(escape, text))


def escape_invisible(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every character of the rule written as its escape."""
    if text.isascii():
        if text.isprintable():
            return text
        return text.translate(_ASCII_TABLE if keep_newlines else _LINE_ASCII_TABLE)
    return _escape_full(text, "block" if keep_newlines else "line")


def escape_in_document(text: str) -> str:
    """The rule over a serialized JSON or TOON document: line feeds are its structure,
    and every escape is a JSON escape of the same character (a lone surrogate too), so
    a parser reads back exactly the value that was written."""
    if text.isascii():
        return text if text.isprintable() else text.translate(_ASCII_TABLE)
    return _escape_full(text, "document")


_UNDECODABLE: dict[int, str] = {}


def escape_undecodable(text: str) -> str:
    """``text`` (a path from ``os.fsdecode``) storable as UTF-8: each byte that was not
    UTF-8 written ``\\xNN``, as the display rule writes it; everything else as is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if not _UNDECODABLE:
            _UNDECODABLE.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
            _UNDECODABLE.update({code: f"\\x{code - 0xDC00:02x}" for code in range(0xDC80, 0xDD00)})
        return text.translate(_UNDECODABLE)
    return text


def restore_undecodable(text: str) -> str:
    """The path :func:`escape_undecodable` was given, for a ``\\xNN`` of 80–ff (best
    effort: a name that really holds ``\\xff`` as four characters reads the same)."""
    if "\\x" not in text:
        return text
    parts = text.split("\\x")
    out = [parts[0]]
    for part in parts[1:]:
        digits = part[:2]
        if (
            len(digits) == 2
            and all(c in "0123456789abcdef" for c in digits)
            and digits[0] in "89abcdef"
        ):
            out.append(chr(0xDC00 + int(digits, 16)) + part[2:])
        else:
            out.append("\\x" + part)
    return "".join(out)


def clean_line(text: str) -> str:
    """A single-line field: the rule, line feeds included."""
    return escape_invisible(text, keep_newlines=False)


# Lines of ours an untrusted line must never pass for (compared case-insensitively
# after leading whitespace).
_OURS = (
    "agentmon:",
    "when handled, acknowledge:",
    "monitored changes are pending",
    "[truncated",
    "recap of recent agentmon activity",
)
_URGENCIES = ("(low)", "(normal)", "(high)")
QUOTE = "> "
"""What an untrusted line that reads as ours is prefixed with."""


def reads_as_ours(line: str) -> bool:
    """Whether ``line`` could pass for a line we write around untrusted text."""
    head = line.lstrip().lower()
    if head.startswith(_OURS):
        return True
    return head.startswith("#") and head.rstrip().endswith(_URGENCIES)


def guard_line(line: str) -> str:
    """``line`` quoted when it reads as ours (see :func:`reads_as_ours`)."""
    return QUOTE + line if reads_as_ours(line) else line


def clean_block(text: str) -> str:
    """A multi-line block: the rule with line feeds kept, and no line that reads as ours."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    text = escape_invisible(text)
    if "\n" not in text:
        return guard_line(text)
    return "\n".join(guard_line(line) for line in text.split("\n"))

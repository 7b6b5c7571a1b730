"""Reading a matched file: its hash, its text within the snapshot cap, and the name
it is stored and shown by."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from agentmonitors.sources.file_globs import StatKey
from agentmonitors.untrusted import escape_undecodable

MIB = 1024 * 1024
# Files are hashed this much at a time, so a huge file costs one chunk of memory.
CHUNK_BYTES = MIB
# The first read of a file asks for this much: most source files are smaller, so they
# are one read. Asking for a whole chunk first made the interpreter allocate (and the
# kernel map) 1 MiB for each small file, which was most of a baseline's hashing time
# (docs/architecture.md, "Speed").
FIRST_READ_BYTES = 64 * 1024
# A changed file's text is kept (stored as its snapshot, diffed against the last one)
# only up to this size; above it the change is reported without a diff, since a diff
# of megabytes would be cut for the agent anyway and each snapshot lives in the store.
SNAPSHOT_CAP_BYTES = MIB


def digest(path: str, *, keep_text: bool) -> tuple[str, bytes | None]:
    """The file's sha256, read in chunks, and its bytes when wanted and within the cap.

    Memory stays at one chunk plus at most :data:`SNAPSHOT_CAP_BYTES` whatever the
    file's size; a file over the cap gives None (its change is reported without a diff).
    Read through the descriptor, not a buffered file: a baseline reads every file of
    the tree, and a small file is then one ``read`` (a short read is the end of a
    regular file; a file still growing is unsettled, so hashed again next time).
    """
    try:
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            chunk = os.read(handle, FIRST_READ_BYTES)
            if len(chunk) < FIRST_READ_BYTES:
                return hashlib.sha256(chunk).hexdigest(), chunk if keep_text else None
            digest = hashlib.sha256()
            kept: bytearray | None = bytearray() if keep_text else None
            while chunk:
                digest.update(chunk)
                if kept is not None:
                    if len(kept) + len(chunk) > SNAPSHOT_CAP_BYTES:
                        kept = None
                    else:
                        kept += chunk
                chunk = os.read(handle, CHUNK_BYTES)
        finally:
            os.close(handle)
    except OSError as error:
        shown = escape_undecodable(path)
        raise OSError(error.errno, f"Cannot read matched file {shown}: {error.strerror}") from error
    return digest.hexdigest(), None if kept is None else bytes(kept)


def as_text(
    files: Mapping[str, StatKey],
) -> tuple[Mapping[str, StatKey], dict[str, str]]:
    """The matched files by the path stored and shown for each, and the real path of
    each one whose name is not UTF-8 (``os.fsdecode`` carries its bytes as lone
    surrogates, which neither the JSON state nor SQLite can hold).

    Such a name is written with ``untrusted.escape_undecodable``'s ``\\xNN``, the
    form every renderer shows, and read through its real path; one file named so
    never blinds the monitor to the others. Checked once over all the paths, so a
    tree of plain names costs a join.
    """
    joined = "\0".join(files)
    if joined.isascii():
        return files, {}
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return files, {}
    shown: dict[str, StatKey] = {}
    real: dict[str, str] = {}
    for path, info in files.items():
        text = escape_undecodable(path)
        if text != path:
            real[text] = path
        shown.setdefault(text, info)
    return shown, real

"""Reading a matched file: its hash, and its text within the snapshot cap."""

from __future__ import annotations

import hashlib
import os

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

"""A matched file's hash and kept text around the first read's size and the chunk size.

The first read asks for FIRST_READ_BYTES, later reads for CHUNK_BYTES; a file of any
size is hashed whole and its text kept exactly when it is within the snapshot cap.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentmonitors.sources.file_fingerprint.reading import (
    CHUNK_BYTES,
    FIRST_READ_BYTES,
    SNAPSHOT_CAP_BYTES,
    digest,
)

SIZES = sorted(
    {
        0,
        1,
        FIRST_READ_BYTES - 1,
        FIRST_READ_BYTES,
        FIRST_READ_BYTES + 1,
        CHUNK_BYTES + FIRST_READ_BYTES,
        SNAPSHOT_CAP_BYTES,
        SNAPSHOT_CAP_BYTES + 1,
        2 * CHUNK_BYTES + 3,
    }
)


@pytest.mark.parametrize("size", SIZES)
def test_every_size_is_hashed_whole_and_kept_within_the_cap(tmp_path: Path, size: int) -> None:
    content = bytes(index % 251 for index in range(size))
    path = tmp_path / "file.bin"
    path.write_bytes(content)
    sha, kept = digest(str(path), keep_text=True)
    assert sha == hashlib.sha256(content).hexdigest()
    assert kept == (content if size <= SNAPSHOT_CAP_BYTES else None)
    assert digest(str(path), keep_text=False) == (sha, None)

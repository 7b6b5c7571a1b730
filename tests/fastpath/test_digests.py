"""The plain-Python sha256 of small inputs gives exactly ``hashlib``'s digest."""

from __future__ import annotations

import hashlib
import random

from agentmonitors.fastpath.digests import SMALL_INPUT_BYTES, _sha256_small, sha256_hex


def test_every_length_up_to_the_limit_matches_hashlib() -> None:
    generator = random.Random(24)
    for length in range(SMALL_INPUT_BYTES + 1):
        data = bytes(generator.randrange(256) for _ in range(length))
        assert _sha256_small(data) == hashlib.sha256(data).hexdigest(), length


def test_paths_ids_and_larger_inputs_match_hashlib() -> None:
    for data in (b"", b"abc", "/home/ü/project".encode(), b"\xff\x00" * 300, b"x" * 5000):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()

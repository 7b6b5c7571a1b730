"""Our ULIDs are python-ulid's: same text for the same parts, same monotonic policy."""

from __future__ import annotations

import itertools
import subprocess
import sys

from ulid import ULID, LaxMonotonicPolicy, ULIDGenerator

from agentmonitors.fastpath.ulid import MonotonicUlid, encode


def test_the_text_of_a_ulid_is_python_ulid_s() -> None:
    for timestamp, randomness in [
        (0, 0),
        (1, 1),
        (1_700_000_000_000, 123_456_789),
        ((1 << 48) - 1, (1 << 80) - 1),
        (1_764_867_000_123, 0xDEADBEEF_CAFEBABE_1234),
    ]:
        raw = timestamp.to_bytes(6, "big") + randomness.to_bytes(10, "big")
        assert encode(timestamp, randomness) == str(ULID.from_bytes(raw))


def test_a_sequence_matches_python_ulid_s_lax_monotonic_generator() -> None:
    """Same wall-clock readings (one repeated, one stepping back, one overflowing the
    random part) and the same random bytes give the same ids."""

    def source() -> itertools.cycle[bytes]:
        return itertools.cycle([b"\x00" * 9 + b"\x07", b"\xff" * 10, b"\x12" * 10, b"\x00" * 10])

    ours_bytes, theirs_bytes = source(), source()
    ours = MonotonicUlid(lambda size: next(ours_bytes)[:size])
    theirs = ULIDGenerator(randomness=lambda _ms: next(theirs_bytes), policy=LaxMonotonicPolicy())
    last = 0
    readings = [0, 5, 5, 5, 4, 9, 9, 9, 9, 3, 12, 12]
    expected = []
    for reading in readings:
        last = max(last, reading)  # what the previous wrapper asked python-ulid for
        expected.append(str(theirs.generate(last)))
    assert [ours.new(reading) for reading in readings] == expected
    # Sorted but where the random part overflowed, as python-ulid's lax policy has it.
    assert expected[:6] == sorted(expected[:6])


def test_making_ids_imports_no_ulid_package() -> None:
    code = (
        "import sys; from agentmonitors.fastpath.ulid import new_id; new_id();"
        " print('ulid' in sys.modules, 'importlib.metadata' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "False"]

from __future__ import annotations

import pytest

from agentmonitors.monitor.durations import duration_ms


def test_duration_ms_units_and_runtime_error() -> None:
    assert [duration_ms(v) for v in ("0s", "30s", "5m", "1h", "2d")] == [
        0,
        30_000,
        300_000,
        3_600_000,
        172_800_000,
    ]
    with pytest.raises(ValueError, match=r'Invalid duration: "1h30m". Expected format'):
        duration_ms("1h30m")

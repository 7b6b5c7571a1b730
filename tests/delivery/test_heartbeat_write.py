"""A hook that delivered rewrites its heartbeat and reaps stale records, cheaply."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmonitors.delivery.heartbeats import _parse_iso_ms, transports_dir, write_heartbeat


def datetime_ms(text: str) -> int | None:
    """The parse every record's timestamp used to take: ``datetime``'s."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def test_record_timestamps_parse_to_the_same_ms_as_datetime() -> None:
    rng = random.Random(13)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    texts = [
        "2024-02-29T00:00:00.000Z",  # leap day
        "2000-02-29T23:59:59.999Z",
        "1900-02-29T00:00:00.000Z",  # not a leap year
        "2023-02-29T00:00:00.000Z",
        "2024-13-01T00:00:00.000Z",
        "2024-12-31T24:00:00.000Z",
        "2024-01-01T00:00:60.000Z",
        "0000-01-01T00:00:00.000Z",
        "0001-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "\uff12024-01-01T00:00:00.000Z",  # a full-width digit
        "2026-07-12T20:55:30",  # naive: UTC
        "2026-07-12T22:55:30+02:00",
        "not a time",
    ]
    for _ in range(2000):
        moment = epoch + timedelta(milliseconds=rng.randrange(0, 253_402_300_799_999))
        texts.append(moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}Z")
    assert [_parse_iso_ms(text) for text in texts] == [datetime_ms(text) for text in texts]


@pytest.mark.slow
def test_a_delivered_heartbeat_reaps_stale_records_without_loading_datetime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    write_heartbeat("channel", "live", workspace="/ws", socket_path="/run/am.sock", ttl_ms=30_000)
    folder = Path(transports_dir())
    live = folder / next(name for name in os.listdir(folder) if name.startswith("channel-live"))
    stale = folder / "channel-gone-00000000.json"
    record = json.loads(live.read_text())
    stale.write_text(json.dumps({**record, "updatedAt": "2020-01-01T00:00:00.000Z"}))
    code = (
        "import sys\n"
        "from agentmonitors.delivery.heartbeats import write_heartbeat\n"
        "write_heartbeat('hook', 'host-1', workspace='/ws', socket_path='/run/am.sock',"
        " delivered=True)\n"
        "print('datetime' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.strip() == "False"
    names = sorted(os.listdir(folder))
    assert live.name in names
    assert stale.name not in names
    assert any(name.startswith("hook-host-1-") for name in names)

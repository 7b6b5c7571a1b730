"""An idle daemon's reaping is not put off by a wall clock set back."""

from __future__ import annotations

from pathlib import Path

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.app import BOOT_GRACE_MS, Daemon, DaemonOptions
from agentmonitors.sources.registry import load_registry

DAY = 86_400_000


def test_a_clock_set_back_a_day_does_not_keep_an_idle_daemon_for_a_day(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    clock = ManualClock()
    options = DaemonOptions(
        workspace=str(workspace),
        monitors_dir=None,
        socket_path=str(tmp_path / "d.sock"),
        db_path=str(tmp_path / "inbox.db"),
        reap_after_ms=1_000,
    )
    daemon = Daemon(options, load_registry(), clock=clock, out=lambda line: None)
    try:
        assert not daemon._should_reap()  # inside the boot grace
        clock.set(clock.now_ms() - DAY)
        assert not daemon._should_reap()
        clock.advance(BOOT_GRACE_MS)
        assert daemon._should_reap()  # idle for the grace since the jump, not a day more
    finally:
        daemon.db.close()

"""A file event reaches the tick with its paths: the daemon observes just what changed.

A real daemon process on its real socket and SQLite database, its clock set by the
test, its file watcher real. A changed file becomes an event without counting as the
monitor's scheduled observation (its walk): ``last_observation_at`` stays where the
walk left it, so the daily walk still comes on time and stays the truth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

TREE = """---
watch:
  type: file-fingerprint
  globs: "src/**/*.txt"
  interval: 1d
---
Look at the change.
"""


@pytest.fixture
def daemon(
    isolated_environment: Path, tmp_path: Path, run_cli: Callable[..., CliResult]
) -> Iterator[ClockedDaemon]:
    root = isolated_environment
    for folder in ("a", "b"):
        (root / "src" / folder).mkdir(parents=True)
        (root / "src" / folder / "x.txt").write_text(f"{folder}\n")
    monitor = root / ".claude" / "monitors" / "tree" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(TREE)
    assert run_cli("init", "--enable-only").code == 0
    clocked = ClockedDaemon(root, tmp_path / "clock")
    clocked.start()
    yield clocked
    clocked.stop()


def test_a_changed_file_is_an_event_without_moving_the_scheduled_walk(
    daemon: ClockedDaemon,
) -> None:
    def scheduled() -> int:
        ((last,),) = daemon.query(
            "SELECT last_observation_at FROM monitor_state WHERE monitor_id = 'tree'"
        )
        return int(last)

    assert scheduled() == START_MS // 1000
    daemon.new_events()
    daemon.advance(60)
    changed = daemon.root / "src" / "b" / "x.txt"
    changed.write_text("b, edited\n")

    events = wait_for(daemon.new_events)

    assert [(monitor, title) for monitor, title, _key in events] == [
        ("tree", f"File changed: {changed}")
    ]
    assert scheduled() == START_MS // 1000

"""Run the real daemon in its own process with a clock the test sets through a file.

``python clocked_daemon.py CLOCK_FILE WORKSPACE [MONITORS_DIR]``: the daemon serves the
workspace on its usual socket and database exactly as ``daemon run`` does, except that
"now" is the number of epoch milliseconds in CLOCK_FILE, so a test can step across
cron minutes and poll intervals and then ask for a tick, instead of sleeping.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agentmonitors.daemon.app import Daemon, DaemonOptions
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.sources.registry import load_registry


class FileClock:
    def __init__(self, path: Path) -> None:
        self.path = path

    def now_ms(self) -> int:
        return int(self.path.read_text().strip())


def main(argv: list[str]) -> int:
    clock_file, workspace = Path(argv[0]), argv[1]
    monitors_dir = argv[2] if len(argv) > 2 else None
    options = DaemonOptions(
        workspace=workspace,
        monitors_dir=monitors_dir,
        socket_path=resolve_socket_path(workspace),
        db_path=resolve_db_path(workspace),
        # The test drives every tick through `daemon.tick`.
        poll_ms=3_600_000,
        reap_after_ms=0,
    )

    def out(line: str) -> None:
        print(line, flush=True)

    daemon = Daemon(options, load_registry(), clock=FileClock(clock_file), out=out)
    return asyncio.run(daemon.run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

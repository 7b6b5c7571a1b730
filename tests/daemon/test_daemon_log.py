"""The daemon's log stays bounded, counts repeated errors and keeps ids and secrets out."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.daemon.logfile import DaemonLog, LogFile, scrub
from agentmonitors.paths import workspace_log_path
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.waiting import wait_for

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""

BOUND = 16 * 1024
SECRET = "tok_PLANTEDsecret0123456789"


def _process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ", 1)[1][0] == "Z"
    except OSError:
        return True


@pytest.mark.slow
def test_a_failing_session_every_tick_leaves_a_bounded_scrubbed_log(
    isolated_environment: Path, run_cli: Callable[..., CliResult]
) -> None:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    # Too long for a file name: writing this session's hook state fails at every refresh,
    # and the failure quotes the path, which holds the id.
    session_id = "s" * 3000 + SECRET
    payload = {"session_id": session_id, "hook_event_name": "SessionStart", "cwd": str(root)}
    env = {**os.environ, "AGENTMONITORS_LOG_MAX_BYTES": str(BOUND)}
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "session", "start"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    socket = read_local_state(str(root)).socket
    assert socket is not None and ping(socket)
    status = call(socket, "status", {})
    assert isinstance(status, dict)
    pid = status["pid"]
    for index in range(12):
        (root / "notes" / "a.txt").write_text(f"change {index}\n")
        call(socket, "daemon.tick", {})
    call(socket, "stop", {})
    wait_for(lambda: _process_gone(pid), timeout=15)

    log = Path(workspace_log_path(str(root)))
    texts = [path.read_text(encoding="utf-8") for path in (log, Path(f"{log}.1")) if path.exists()]
    assert log.stat().st_size <= BOUND
    everything = "".join(texts)
    assert "could not refresh the hook state" in everything
    assert "repeated" in everything
    assert everything.count("could not refresh the hook state") <= 2  # once, then the summary
    assert session_id not in everything and "s" * 100 not in everything
    assert SECRET not in everything


def test_the_log_file_moves_aside_before_it_passes_its_size(tmp_path: Path) -> None:
    path = tmp_path / "daemon.log"
    file = LogFile(str(path), max_bytes=1000, std_fds=())
    for _ in range(25):
        file.write(b"x" * 99 + b"\n")
        assert path.stat().st_size <= 1000
    assert Path(f"{path}.1").stat().st_size <= 1000
    # What reaches the descriptor without going through write() is caught by check().
    os.write(file.fd, b"y" * 2000)
    file.check()
    assert path.stat().st_size == 0 and Path(f"{path}.1").read_bytes().endswith(b"y" * 2000)
    file.close()


def test_raw_stderr_of_a_daemon_process_follows_the_rotation(tmp_path: Path) -> None:
    """A traceback written straight to descriptor 2 lands in the live, bounded log."""
    path = tmp_path / "daemon.log"
    script = (
        "import os, sys\n"
        "from agentmonitors.daemon.logfile import setup_daemon_log\n"
        f"log = setup_daemon_log({str(path)!r})\n"
        "for index in range(40):\n"
        "    os.write(2, b'raw ' + b'z' * 1000 + b'\\n')\n"
        "    log.file.check()\n"
        "    print('line', index)\n"
        "os.write(2, b'last raw line\\n')\n"
    )
    env = {**os.environ, "AGENTMONITORS_LOG_MAX_BYTES": str(BOUND)}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=60, check=False)
    assert done.returncode == 0
    assert path.stat().st_size <= BOUND + 1100
    assert path.read_text().endswith("last raw line\n")
    assert "line 39" in path.read_text()


def _record(message: str, *args: object, error: bool = False) -> logging.LogRecord:
    exc_info = None
    if error:
        try:
            raise OSError("File name too long: /x/" + "a" * 500)
        except OSError:
            exc_info = sys.exc_info()
    return logging.LogRecord(
        "agentmonitors.delivery", logging.WARNING, __file__, 1, message, args, exc_info
    )


def test_repeats_within_a_minute_are_counted_then_summed_up() -> None:
    lines: list[str] = []
    clock = [100.0]
    log = DaemonLog(lines.append, lines.append, now=lambda: clock[0])
    formatter = logging.Formatter()
    for index in range(5):
        log.record(_record("could not refresh session %s", f"id-{index}", error=True), formatter)
        clock[0] += 1
    assert len(lines) == 1 and lines[0].startswith("agentmonitors.delivery WARNING: could not")
    assert "a" * 100 not in lines[0] and "…[" in lines[0]
    clock[0] = 161.0
    log.summarize_repeats()
    assert lines[1] == (
        "… repeated 4 times in 61 s: agentmonitors.delivery WARNING: could not refresh "
        "session id-0\n"
    )
    # A new window starts with the record written again.
    log.record(_record("could not refresh session %s", "id-9"), formatter)
    log.record(_record("could not refresh session %s", "id-10"), formatter)
    log.close()
    assert lines[-1].startswith("… repeated once more in ")


def test_an_idle_log_wakes_only_when_a_summary_or_a_size_check_is_due() -> None:
    clock = [100.0]
    log = DaemonLog(lambda _: None, lambda _: None, now=lambda: clock[0])
    assert log.next_due_in(30.0) == 30.0
    log.record(_record("could not refresh session %s", "id-1"), logging.Formatter())
    clock[0] = 150.0
    assert log.next_due_in(30.0) == 10.0
    clock[0] = 170.0
    assert log.next_due_in(30.0) == 0.0


def test_an_idle_log_sets_no_timer_and_a_new_repeat_wakes_its_upkeep() -> None:
    """No fixed beat: with nothing pending the upkeep sleeps until a repeat starts, and
    then wakes when that repeat's window is over to write its summary."""
    written: list[str] = []
    log = DaemonLog(lambda _: None, written.append, window_s=0.05)
    assert log.next_due_in() is None

    async def scenario() -> None:
        upkeep = asyncio.create_task(log.maintain())
        await asyncio.sleep(0.05)  # the upkeep is asleep, with no timer
        log.record(_record("could not refresh session %s", "id-1"), logging.Formatter())
        log.record(_record("could not refresh session %s", "id-2"), logging.Formatter())
        await wait_for_async(lambda: any("repeated once more" in line for line in written))
        upkeep.cancel()

    asyncio.run(scenario())


async def wait_for_async(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_scrub_masks_credentials_and_keeps_a_caller_to_one_line() -> None:
    text = scrub(
        "fetch https://user:hunter2pass@example.com/x?token=abc123 failed; Bearer "
        "abcdefghijklmnop\nforged line",
        one_line=True,
    )
    assert "hunter2pass" not in text and "abc123" not in text and "abcdefghijklmnop" not in text
    assert "\n" not in text and "\\nforged line" in text
    assert scrub("bell \x07 here") == "bell \\u0007 here"
    long = scrub("x" * 10_000)
    assert len(long) < 100

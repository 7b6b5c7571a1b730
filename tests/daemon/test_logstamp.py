"""Every line a daemon writes to its log starts with an ISO-8601 UTC timestamp."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentmonitors.daemon.logstamp import iso_now, stamped_text_stream

# 2026-12-04T11:54:19.123Z
MOMENT = 1_796_385_259.123


def test_iso_now_is_utc_with_milliseconds() -> None:
    assert iso_now(lambda: MOMENT) == "2026-12-04T11:54:19.123Z"


def test_each_line_is_stamped_once_however_it_is_written(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        stream = stamped_text_stream(fd, now=lambda: MOMENT)
        stream.write("one\ntwo")
        stream.write(" continued\n")
        stream.write("thr€e\n\n")
        stream.flush()
    finally:
        os.close(fd)
    stamp = "2026-12-04T11:54:19.123Z "
    assert log.read_text(encoding="utf-8").splitlines() == [
        stamp + "one",
        stamp + "two continued",
        stamp + "thr€e",
        stamp,
    ]


def test_output_to_a_terminal_or_pipe_is_left_alone(tmp_path: Path) -> None:
    # A bad flag makes `daemon run` print its error and exit before serving.
    run = [sys.executable, "-m", "agentmonitors", "daemon", "run", "--poll-ms", "0"]
    piped = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert piped.stderr == "error: --poll-ms must be a positive number.\n"
    log = tmp_path / "out.log"
    with log.open("w") as handle:
        subprocess.run(run, stdout=handle, stderr=handle, cwd=tmp_path, check=False)
    line = log.read_text()
    assert line.endswith("Z error: --poll-ms must be a positive number.\n")
    assert len(line.split(" ", 1)[0]) == len("2026-12-04T11:54:19.123Z")

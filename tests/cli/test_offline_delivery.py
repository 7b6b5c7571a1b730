"""``session list``, ``events list`` and ``events ack`` with the daemon down.

The database answers the reads; an ack is stored there and the daemon, started again,
honours it: the event stays acknowledged and no reminder brings it back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_for

pytestmark = pytest.mark.slow

EXE = str(Path(sys.executable).parent / "agentmonitors")
MONITOR = (
    "---\nname: Notes\nwatch:\n  type: file-fingerprint\n  globs: ['notes/*.md']\n---\nRead it.\n"
)
NOTICE = "No daemon running — answered from the stored state."


def run(root: Path, *args: str, stdin: Any = None) -> tuple[int, str, str]:
    data = json.dumps(stdin).encode() if stdin is not None else b""
    done = subprocess.run(
        [EXE, *args],
        input=data,
        capture_output=True,
        cwd=root,
        env={**os.environ},
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def listed(root: Path, sid: str, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run(root, "events", "list", "--session", sid, "--format", "json", *extra)
    assert code == 0, err
    return list(json.loads(out))


@pytest.fixture
def project(isolated_environment: Path) -> Any:
    root = isolated_environment
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("one\n")
    (root / ".claude" / "monitors" / "notes").mkdir(parents=True)
    (root / ".claude" / "monitors" / "notes" / "MONITOR.md").write_text(MONITOR)
    assert run(root, "init", "--enable-only")[0] == 0
    assert run(root, "daemon", "start")[0] == 0
    yield root
    run(root, "daemon", "stop")


def test_reads_and_acks_work_from_the_database_and_the_daemon_honours_the_ack(
    project: Path,
) -> None:
    root = project
    start = {"session_id": "h1", "hook_event_name": "SessionStart", "cwd": str(root)}
    assert run(root, "session", "start", stdin=start)[0] == 0
    sessions = json.loads(run(root, "session", "list", "--format", "json")[1])
    sid = next(item["id"] for item in sessions if item["hostSessionId"] == "h1")
    (root / "notes" / "a.md").write_text("two\n")
    wait_for(lambda: listed(root, sid), timeout=30)
    [event] = listed(root, sid)
    own_socket = json.loads(run(root, "daemon", "status", "--format", "json")[1])["socketPath"]
    assert run(root, "daemon", "stop")[0] == 0

    # Reads: the stored state, said to be so on stderr; stdout stays the data alone.
    code, out, err = run(root, "session", "list", "--format", "json")
    assert (code, err) == (0, NOTICE + "\n")
    assert [item["id"] for item in json.loads(out)] == [sid]
    code, out, err = run(root, "session", "list")
    assert code == 0 and sid in out
    code, out, err = run(root, "events", "list", "--session", sid, "--format", "json")
    assert (code, err) == (0, NOTICE + "\n")
    [offline] = json.loads(out)
    assert offline["id"] == event["id"] and offline["deliveryState"] == "unread"
    code, out, _ = run(root, "events", "list", "--session", sid, "--format", "toon")
    assert code == 0 and event["id"] in out
    code, out, _ = run(root, "events", "list", "--session", sid, "--format", "text")
    assert code == 0 and event["id"] in out

    # An unknown session is an error, as the daemon says it.
    code, out, err = run(root, "events", "list", "--session", "01JNOPE")
    assert code == 1 and out == ""
    assert err.startswith("error: Session not found: 01JNOPE.")

    # The ack is stored, also through the command a reminder prints (its own --socket).
    code, out, err = run(root, "events", "ack", "--session", sid, "--socket", own_socket)
    assert code == 0, err
    assert out == "Acknowledged 1 event.\n"
    assert "the acknowledgement is stored" in err
    assert listed(root, sid, "--unread") == []

    # The daemon, started again, honours it: acknowledged, and no reminder for it.
    assert run(root, "daemon", "start")[0] == 0
    code, out, err = run(root, "events", "list", "--session", sid, "--format", "json")
    assert (code, err) == (0, "")
    [online] = json.loads(out)
    assert online["deliveryState"] == "acknowledged"
    prompt = {"session_id": "h1", "hook_event_name": "UserPromptSubmit", "cwd": str(root)}
    assert run(root, "hook", "deliver", stdin=prompt) == (0, "", "")


def test_another_daemons_socket_is_not_answered_from_this_database(project: Path) -> None:
    code, out, err = run(project, "session", "list", "--socket", str(project / "other.sock"))
    assert (code, out) == (1, "")
    assert err.startswith("error: No daemon running")


def test_with_no_database_the_commands_still_say_how_to_start_one(
    isolated_environment: Path,
) -> None:
    for args in (("session", "list"), ("events", "list", "--session", "s")):
        code, out, err = run(isolated_environment, *args)
        assert (code, out) == (1, "")
        assert err.startswith("error: No daemon running")

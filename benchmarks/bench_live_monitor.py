"""File write → the model request Claude Code opens for it, through the Monitor tool.

Run: .venv/bin/python benchmarks/bench_live_monitor.py [rounds]
The real Claude Code (found or installed as the offline e2e tests do), a fake Messages
API on 127.0.0.1, our plugin's hooks, and a Monitor running ``agentmonitors events
follow --session <id>`` that the fake model started. The session is idle; each round
writes a normal-urgency note and times until the ``<task-notification>`` request
arrives at the fake API, then acknowledges so the next round starts from nothing
unread. Prints figures, asserts nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _daemon import percentile  # noqa: E402
from tests.e2e.claude_code import (  # noqa: E402
    ClaudeCodeUnavailable,
    StreamSession,
    isolated_env,
    locate_claude_code,
    processes_mentioning,
    venv_bin,
)
from tests.e2e.fake_messages_api import FakeMessagesApi, ToolCall  # noqa: E402

MONITOR = """---
name: Notes changed
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: normal
---
A note changed.
"""
LIVE_PROMPT = "start live updates"
PENDING = "Monitored changes are pending."
WAIT_S = 60.0


def cli(project: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [os.path.join(venv_bin(), "agentmonitors"), *args],
        cwd=project,
        env={**env, "PWD": str(project)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def wait_for_notification(api: FakeMessagesApi, since: int) -> float:
    """Arrival time of the first request from ``since`` on holding a delivery line."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for request in api.messages_requests(since=since):
            if "<task-notification>" in request.raw and PENDING in request.raw:
                return request.time
        time.sleep(0.005)
    raise RuntimeError(f"no task-notification request within {WAIT_S:.0f} s")


def stop_follow(session_id: str) -> None:
    for pid, _command in processes_mentioning(session_id):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"follow" in argv and b"events" in argv:
            os.kill(pid, signal.SIGTERM)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    try:
        claude = locate_claude_code()
    except ClaudeCodeUnavailable as error:
        print(f"Claude Code unavailable, nothing measured: {error}")
        return
    base = Path(tempfile.mkdtemp(prefix="am-bench-live-"))
    project, home = base / "project", base / "home"
    (project / "notes").mkdir(parents=True)
    home.mkdir()
    note = project / "notes" / "a.txt"
    note.write_text("0\n")
    session_id = ""
    with FakeMessagesApi(base / "api-requests.jsonl") as api:
        env = isolated_env(home, api.base_url)
        try:
            cli(project, env, "init", "--enable-only")
            folder = project / ".claude" / "monitors" / "notes"
            folder.mkdir(parents=True)
            (folder / "MONITOR.md").write_text(MONITOR)
            cli(project, env, "validate")
            session = StreamSession(
                claude,
                project,
                env,
                str(uuid.uuid4()),
                base / "claude-stderr.txt",
                extra_args=["--strict-mcp-config", "--allowedTools", "Monitor"],
                request_mark=api.mark,
            )
            with session:
                session.send("hello")
                sessions = json.loads(cli(project, env, "session", "list", "--format", "json"))
                session_id = next(
                    s["id"] for s in sessions if s["hostSessionId"] == session.session_id
                )
                command = f"agentmonitors events follow --session {session_id}"
                api.script_tool_call(
                    ToolCall(
                        trigger=LIVE_PROMPT,
                        name="Monitor",
                        input={
                            "description": "AgentMon live updates",
                            "timeout_ms": 900_000,
                            "command": command,
                        },
                    )
                )
                session.send(LIVE_PROMPT)
                time.sleep(2.0)  # follow's first poll; the first round is a warm-up anyway
                latencies: list[float] = []
                for index in range(rounds + 1):
                    mark = api.mark()
                    written = time.time()
                    note.write_text(f"{index + 1}\n")
                    arrived = wait_for_notification(api, mark)
                    if index:
                        latencies.append((arrived - written) * 1000)
                    cli(project, env, "events", "ack", "--session", session_id)
                    time.sleep(0.5)  # the notification turn's own hooks and answer
                stop_follow(session_id)
        finally:
            if session_id:
                stop_follow(session_id)
            subprocess.run(
                [os.path.join(venv_bin(), "agentmonitors"), "daemon", "stop"],
                cwd=project,
                env=env,
                capture_output=True,
                check=False,
            )
    print(
        f"file write -> Monitor task-notification request at the model, {rounds} rounds "
        "(normal urgency, real Claude Code, idle session)"
    )
    print(f"  median {statistics.median(latencies):7.1f} ms")
    print(f"  p95    {percentile(latencies, 0.95):7.1f} ms")
    print(f"  max    {max(latencies):7.1f} ms")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""``agentmonitors demo``: a file change reaching an agent session, end to end.

Everything runs as Claude Code would run it: the real hook commands as separate
processes, fed the exact JSON payloads Claude Code writes on stdin, against a real
daemon. The project and the daemon's data live in a temporary folder, so the demo
touches nothing of yours.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

import click

from agentmonitors.paths import python_command

MONITOR = """---
name: Notes changed
watch:
  type: file-fingerprint
  globs: "notes/*.md"
urgency: normal
---
A note changed. Read it and update the plan if it asks for something new.
"""
HOST_SESSION = "demo-session-0001"
WAIT_S = 20.0


class DemoFailed(Exception):
    pass


class Demo:
    def __init__(self, base: str) -> None:
        self.base = base
        self.project = os.path.join(base, "project")
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("CLAUDE_PROJECT_DIR", "AGENTMONITORS_DB", "AGENTMONITORS_SOCKET")
        }
        # The daemon's database and socket go under the temporary folder too.
        self.env["XDG_DATA_HOME"] = os.path.join(base, "data")
        self.socket: str | None = None

    def run(
        self, *args: str, stdin: Any = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        data = None if stdin is None else (stdin if isinstance(stdin, str) else json.dumps(stdin))
        done = subprocess.run(
            python_command("-m", "agentmonitors", *args),
            input=data,
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=60,
            check=False,
        )
        if check and done.returncode != 0:
            raise DemoFailed(f"`agentmonitors {' '.join(args)}` failed: {done.stderr.strip()}")
        return done

    def payload(self, event: str, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": HOST_SESSION,
            "transcript_path": os.path.join(self.base, "transcript.jsonl"),
            "cwd": self.project,
            "hook_event_name": event,
            **extra,
        }

    def events(self, session_id: str) -> list[dict[str, Any]]:
        listed = self.run("events", "list", "--session", session_id, "--format", "json")
        result: list[dict[str, Any]] = json.loads(listed.stdout)
        return result


def step(number: int, text: str) -> None:
    click.secho(f"\n{number}. {text}", bold=True)


def show(text: str) -> None:
    for line in text.rstrip("\n").splitlines():
        click.echo(f"   {line}")


def play(demo: Demo) -> None:
    os.makedirs(os.path.join(demo.project, "notes"))
    with open(os.path.join(demo.project, "notes", "plan.md"), "w", encoding="utf-8") as handle:
        handle.write("# Plan\n- ship the parser\n")
    step(1, f"A project with one monitor: {demo.project}")
    demo.run("init", "--enable-only")
    folder = os.path.join(demo.project, ".claude", "monitors", "notes")
    os.makedirs(folder)
    with open(os.path.join(folder, "MONITOR.md"), "w", encoding="utf-8") as handle:
        handle.write(MONITOR)
    show(demo.run("validate").stdout)

    step(2, "Claude Code starts a session (SessionStart hook: `agentmonitors session start`)")
    started = demo.run("session", "start", stdin=demo.payload("SessionStart", source="startup"))
    show(started.stderr)
    session = next(
        item
        for item in json.loads(demo.run("session", "list", "--format", "json").stdout)
        if item["hostSessionId"] == HOST_SESSION
    )
    session_id = session["id"]

    step(3, "Someone edits notes/plan.md")
    with open(os.path.join(demo.project, "notes", "plan.md"), "a", encoding="utf-8") as handle:
        handle.write("- also: write the migration guide\n")
    started_at = time.monotonic()
    while not demo.events(session_id):
        if time.monotonic() - started_at > WAIT_S:
            raise DemoFailed("the daemon did not record the change in time")
        time.sleep(0.05)
    event = demo.events(session_id)[0]
    show(
        f"the daemon stored event {event['id']} ({event['urgency']}) "
        f"{(time.monotonic() - started_at) * 1000:.0f} ms later: {event['summary']}"
    )

    step(4, "The user sends a prompt (UserPromptSubmit hook: `agentmonitors hook deliver`)")
    delivered = demo.run("hook", "deliver", stdin=demo.payload("UserPromptSubmit", prompt="next?"))
    if not delivered.stdout:
        raise DemoFailed("hook deliver printed nothing")
    click.echo("   stdout, as Claude Code reads it:")
    show(delivered.stdout)
    context = json.loads(delivered.stdout)["hookSpecificOutput"]["additionalContext"]
    click.echo("   the additionalContext the model receives:")
    show(context)
    again = demo.run("hook", "deliver", stdin=demo.payload("UserPromptSubmit", prompt="and now?"))
    show(
        "a second prompt gets nothing: the reminder waits for an acknowledgement"
        if not again.stdout
        else "unexpected: the reminder repeated"
    )

    step(5, "The context is compacted (SessionStart again): the recap shows events in full")
    recap = demo.run("session", "start", stdin=demo.payload("SessionStart", source="compact"))
    show(json.loads(recap.stdout)["hookSpecificOutput"]["additionalContext"])

    step(6, "The agent handles it and acknowledges")
    show(demo.run("events", "ack", "--session", session_id).stdout)
    remaining = demo.run("events", "list", "--session", session_id, "--unread", "--format", "text")
    show(remaining.stdout)
    if again.stdout or remaining.stdout.strip() != "No events found.":
        raise DemoFailed("the delivery state is not what it should be")


@click.command(
    "demo",
    help="Show a file change reaching an agent session end to end, with the exact text a "
    "Claude Code turn receives. Runs in a temporary folder; takes a few seconds.",
)
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
def command(keep: bool) -> int:
    base = tempfile.mkdtemp(prefix="agentmonitors-demo-")
    demo = Demo(base)
    code = 0
    try:
        play(demo)
        click.secho(
            "\nDemo passed: the change reached the session, and was delivered once.", bold=True
        )
    except DemoFailed as error:
        click.echo(f"error: demo failed: {error}", err=True)
        code = 1
    finally:
        demo.run("daemon", "stop", check=False)
        if keep:
            click.echo(f"Kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return code

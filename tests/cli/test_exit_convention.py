"""The exit-code and stream convention of docs/cli.md, held by one table over every command.

Each command of the click tree has a row; a command added without one fails
:func:`test_every_command_has_a_row`. A row's cases run through the installed console
script in one project with a real daemon, and each outcome is judged by its kind:

- ``ok``: exit 0, no ``error:`` line on stderr, and stdout is JSON under ``--format json``.
- ``fail``: exit 1, exactly one ``error: …`` line on stderr; under ``--format json``
  stdout is empty or one JSON document (an ``{"error": …}`` object, or the report).
- ``usage``: exit 2, one ``error: …`` line on stderr, nothing on stdout.
- ``hook``: exit 0, the host's "nothing" on stdout and nothing on stderr, whatever stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from agentmonitors.cli.app import cli
from tests.waiting import wait_for

EXE = str(Path(sys.executable).parent / "agentmonitors")
SID = "{sid}"  # the session opened for the run
EID = "{eid}"  # an event of that session
OBJ = "{obj}"  # the object the monitor watches (its absolute path)

# One case: (kind, arguments, stdin). Arguments may name SID and EID.
Case = tuple[str, tuple[str, ...], bytes]


def ok(*args: str, stdin: bytes = b"") -> Case:
    return ("ok", args, stdin)


def fail(*args: str, stdin: bytes = b"") -> Case:
    return ("fail", args, stdin)


def usage(*args: str) -> Case:
    return ("usage", (*args, "--no-such-option"), b"")


def hook(*args: str, stdin: bytes) -> Case:
    return ("hook", args, stdin)


GARBAGE = b"\xff\xfe not json {"

# Every command, group or leaf: its cases. A leaf has a usage case, a success case and a
# failure case where the command can fail in a test's reach (the comment says otherwise).
ROWS: dict[str, list[Case]] = {
    "agentmonitors": [ok(), ok("--version"), usage()],
    "agentmonitors channel": [ok("channel"), usage("channel")],
    # A stdio server: its stdin closed, it ends at once; without a session it says so.
    "agentmonitors channel serve": [usage("channel", "serve")],
    "agentmonitors daemon": [ok("daemon"), usage("daemon")],
    "agentmonitors daemon once": [
        ok("daemon", "once", "--format", "json"),
        # A tick that ran and found failing monitors is a failure (their report on stdout).
        fail("daemon", "once", "broken"),
        fail("daemon", "once", "broken", "--format", "json"),
        fail("daemon", "once", "no-such-dir"),
        fail("daemon", "once", "no-such-dir", "--format", "json"),
        usage("daemon", "once"),
    ],
    # Runs in the foreground until stopped: the running daemon makes a second one fail.
    "agentmonitors daemon run": [fail("daemon", "run"), usage("daemon", "run")],
    "agentmonitors daemon start": [ok("daemon", "start"), usage("daemon", "start")],
    "agentmonitors daemon status": [
        ok("daemon", "status"),
        ok("daemon", "status", "--format", "json"),
        usage("daemon", "status"),
    ],
    "agentmonitors daemon stop": [
        fail("daemon", "stop", "--socket", "/nonexistent/agentmonitors.sock"),
        fail("daemon", "stop", "--socket", "/nonexistent/a.sock", "--format", "json"),
        usage("daemon", "stop"),
    ],
    # Starts and ends its own throwaway project; takes a few seconds.
    "agentmonitors demo": [ok("demo"), usage("demo")],
    "agentmonitors diff": [
        ok("diff", "docs", "--object", OBJ, "--session", SID, "--format", "json"),
        fail("diff", "no-such-monitor", "--object", "x"),
        fail("diff", "no-such-monitor", "--object", "x", "--format", "json"),
        usage("diff"),
    ],
    "agentmonitors doctor": [
        ok("doctor"),
        ok("doctor", "--format", "json"),
        fail("doctor", "--dir", "broken"),
        fail("doctor", "--dir", "broken", "--format", "json"),
        usage("doctor"),
    ],
    "agentmonitors events": [ok("events"), usage("events")],
    "agentmonitors events ack": [
        ok("events", "ack", "--session", SID, "--event-ids", EID),
        ok("events", "ack", "--session", SID, "--format", "json"),
        fail("events", "ack", "--session", SID, "--event-ids", "01JNOPE"),
        fail("events", "ack", "--session", SID, "--event-ids", "01JNOPE", "--format", "json"),
        usage("events", "ack"),
    ],
    "agentmonitors events follow": [
        ok("events", "follow", "--session", SID, "--max-seconds", "0.2"),
        fail("events", "follow", "--session", "01JNOPE", "--max-seconds", "0.2"),
        usage("events", "follow"),
    ],
    "agentmonitors events list": [
        ok("events", "list", "--session", SID),
        ok("events", "list", "--session", SID, "--format", "json"),
        fail("events", "list", "--session", "01JNOPE"),
        fail("events", "list", "--session", "01JNOPE", "--format", "json"),
        usage("events", "list"),
    ],
    "agentmonitors hook": [ok("hook"), usage("hook")],
    "agentmonitors hook claim": [
        ok("hook", "claim", "--session", SID, "--lifecycle", "turn-idle"),
        fail("hook", "claim", "--session", "01JNOPE", "--lifecycle", "turn-idle"),
        usage("hook", "claim"),
    ],
    # A hook: bad flags and bad input alike end quietly with 0.
    "agentmonitors hook deliver": [
        hook("hook", "deliver", stdin=GARBAGE),
        hook("hook", "deliver", stdin=b""),
        hook("hook", "deliver", "--host", "codex", stdin=GARBAGE),
        hook("hook", "deliver", "--host", "cursor", stdin=b"{}"),
    ],
    # The asyncRewake Stop hook: exit 2 only with a delivery; bad input ends quietly.
    "agentmonitors hook rewake": [
        hook("hook", "rewake", stdin=GARBAGE),
        hook("hook", "rewake", stdin=b""),
        hook("hook", "rewake", stdin=b'{"session_id": "s", "hook_event_name": "Stop"}'),
    ],
    "agentmonitors init": [
        ok("init", "scaffolded", "--dir", "scratch"),
        fail("init", "scaffolded", "--dir", "scratch"),  # exists now
        ("usage", ("init", "docs", "--enable-only"), b""),
        usage("init"),
    ],
    "agentmonitors inspect": [
        ok("inspect", "--session", SID, "--format", "json"),
        fail("inspect", "--session", "01JNOPE"),
        fail("inspect", "--session", "01JNOPE", "--format", "json"),
        usage("inspect"),
    ],
    "agentmonitors monitor": [ok("monitor"), usage("monitor")],
    "agentmonitors monitor approve": [
        ok("monitor", "approve", "--list", "--format", "json"),
        fail("monitor", "approve", "no-such-monitor", "--yes"),
        usage("monitor", "approve"),
    ],
    "agentmonitors monitor explain": [
        ok("monitor", "explain", "docs"),
        ok("monitor", "explain", "docs", "--format", "json"),
        fail("monitor", "explain", "bad", "--dir", "broken"),
        fail("monitor", "explain", "bad", "--dir", "broken", "--format", "json"),
        fail("monitor", "explain", "no-such-monitor", "--format", "json"),
        usage("monitor", "explain"),
    ],
    "agentmonitors monitor history": [
        ok("monitor", "history", "docs", "--format", "json"),
        fail("monitor", "history", "no-such-monitor"),
        ("usage", ("monitor", "history", "--dir", "x"), b""),
        usage("monitor", "history"),
    ],
    "agentmonitors monitor test": [
        ok("monitor", "test", "docs", "--format", "json"),
        fail("monitor", "test", "missing.md"),
        fail("monitor", "test", "bad", "--format", "json"),
        usage("monitor", "test"),
    ],
    "agentmonitors scan": [
        ok("scan", "--format", "json"),
        fail("scan", "missing-dir"),
        fail("scan", "missing-dir", "--format", "json"),
        usage("scan"),
    ],
    "agentmonitors schema": [ok("schema"), usage("schema")],
    "agentmonitors schema generate": [
        ok("schema", "generate"),
        fail("schema", "generate", "-o", "notes/a.md/schema.json"),
        usage("schema", "generate"),
    ],
    "agentmonitors session": [ok("session"), usage("session")],
    "agentmonitors session close": [
        fail("session", "close", "01JNOPE"),
        fail("session", "close", "01JNOPE", "--format", "json"),
        usage("session", "close"),
    ],
    "agentmonitors session end": [
        hook("session", "end", stdin=GARBAGE),
        hook("session", "end", "--host", "cursor", stdin=b""),
    ],
    "agentmonitors session list": [
        ok("session", "list"),
        ok("session", "list", "--format", "json"),
        fail("session", "list", "--socket", "/nonexistent/a.sock"),
        usage("session", "list"),
    ],
    "agentmonitors session open": [
        ok("session", "open", "--host-session-id", "second", "--format", "json"),
        usage("session", "open"),
    ],
    "agentmonitors session start": [
        hook("session", "start", stdin=GARBAGE),
        hook("session", "start", "--host", "codex", stdin=b"[1, 2]"),
    ],
    "agentmonitors snapshot": [
        ok("snapshot", "docs", "--object", OBJ, "--format", "json"),
        fail("snapshot", "no-such-monitor"),
        fail("snapshot", "no-such-monitor", "--format", "json"),
        usage("snapshot"),
    ],
    "agentmonitors source": [ok("source"), usage("source")],
    # pip runs behind install, update and remove: their failures are in reach, and
    # their successes are the packaging tests' (tests/cli/test_source_packages.py).
    "agentmonitors source install": [
        fail("source", "install", "./no-such-package-folder"),
        usage("source", "install"),
    ],
    "agentmonitors source list": [
        ok("source", "list", "--format", "json"),
        usage("source", "list"),
    ],
    "agentmonitors source remove": [
        fail("source", "remove", "file-fingerprint"),
        fail("source", "remove", "file-fingerprint", "--format", "json"),
        usage("source", "remove"),
    ],
    "agentmonitors source search": [
        ok("source", "search", "file", "--format", "json"),
        usage("source", "search"),
    ],
    "agentmonitors source update": [
        fail("source", "update", "no-such-source"),
        usage("source", "update"),
    ],
    "agentmonitors summary": [
        ok("summary", "docs", "--format", "json"),
        fail("summary", "no-such-monitor"),
        usage("summary"),
    ],
    "agentmonitors validate": [
        ok("validate"),
        ok("validate", "--format", "json"),
        fail("validate", "broken"),
        fail("validate", "broken", "--format", "json"),
        fail("validate", "missing-dir"),
        usage("validate"),
    ],
    "agentmonitors verify": [
        ok("verify", "docs"),
        fail("verify", "bad", "--dir", "broken"),
        fail("verify", "bad", "--dir", "broken", "--format", "json"),
        ("usage", ("verify", "docs", "--manual", "--trigger-cmd", "true"), b""),
        usage("verify"),
    ],
    "agentmonitors watch": [ok("watch"), usage("watch")],
    "agentmonitors watch cancel": [
        fail("watch", "cancel", "01JNOPE", "--session", SID),
        fail("watch", "cancel", "01JNOPE", "--session", SID, "--format", "json"),
        usage("watch", "cancel"),
    ],
    "agentmonitors watch declare": [
        ok(
            "watch",
            "declare",
            "file-fingerprint",
            "--session",
            SID,
            "--scope",
            "globs=notes/*.md",
            "--format",
            "json",
        ),
        fail("watch", "declare", "no-such-source", "--session", SID, "--scope", "a=b"),
        usage("watch", "declare"),
    ],
    "agentmonitors watch list": [
        ok("watch", "list", "--session", SID, "--format", "json"),
        fail("watch", "list", "--session", "01JNOPE"),
        usage("watch", "list"),
    ],
}


def _walk(command: click.Command, path: str, ctx: click.Context) -> Iterator[str]:
    yield path
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _walk(sub, f"{path} {name}", click.Context(sub, parent=ctx, info_name=name))


def every_command() -> set[str]:
    return set(_walk(cli, "agentmonitors", click.Context(cli, info_name="agentmonitors")))


def test_every_command_has_a_row() -> None:
    assert every_command() == set(ROWS), "add the new command's row to ROWS"
    for path, cases in ROWS.items():
        words = path.split()[1:]
        for _kind, args, _stdin in cases:
            assert list(args[: len(words)]) == words, (path, args)
        kinds = {kind for kind, _args, _stdin in cases}
        assert kinds & {"usage", "hook"}, f"{path}: no usage case"


def judge(kind: str, args: tuple[str, ...], code: int, out: str, err: str) -> str | None:
    """What breaks the convention in one outcome, or None."""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    as_json = "--format" in args and args[args.index("--format") + 1] == "json"
    if kind == "hook":
        return None if (code, out.strip("{}"), err) == (0, "", "") else "hook spoke"
    if kind == "usage":
        if code != 2 or out or len(errors) != 1:
            return "usage error is not: exit 2, one error line, empty stdout"
        return None
    if kind == "ok":
        if code != 0 or errors:
            return "success is not: exit 0 without an error line"
    elif code != 1 or len(errors) != 1:
        return f"failure is not: exit 1 with one error line (got {len(errors)})"
    if as_json and out.strip():
        try:
            json.loads(out)
        except ValueError:
            return "stdout under --format json is not one JSON document"
    return None


def run(root: Path, args: tuple[str, ...], stdin: bytes) -> tuple[int, str, str]:
    done = subprocess.run(
        [EXE, *args],
        input=stdin,
        capture_output=True,
        cwd=root,
        env={**os.environ},
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode()


MONITOR = (
    "---\nname: Docs\nwatch:\n  type: file-fingerprint\n  globs: ['notes/*.md']\n---\nRead it.\n"
)


@pytest.mark.slow
def test_every_command_follows_the_convention(isolated_environment: Path) -> None:
    root = isolated_environment
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("one\n")
    (root / ".claude" / "monitors" / "docs").mkdir(parents=True)
    (root / ".claude" / "monitors" / "docs" / "MONITOR.md").write_text(MONITOR)
    (root / "broken" / "bad").mkdir(parents=True)
    (root / "broken" / "bad" / "MONITOR.md").write_text("---\nwatch:\n  type: nope\n---\nx\n")
    assert run(root, ("init", "--enable-only"), b"")[0] == 0
    assert run(root, ("daemon", "start"), b"")[0] == 0
    try:
        # Registered as Claude Code registers it, so doctor sees a whole delivery chain.
        start = {"session_id": "h1", "hook_event_name": "SessionStart", "cwd": str(root)}
        assert run(root, ("session", "start"), json.dumps(start).encode())[0] == 0
        listed = json.loads(run(root, ("session", "list", "--format", "json"), b"")[1])
        sid = next(str(item["id"]) for item in listed if item["hostSessionId"] == "h1")

        def events() -> list[dict[str, object]]:
            listed = run(root, ("events", "list", "--session", sid, "--format", "json"), b"")
            return list(json.loads(listed[1] or "[]"))

        (root / "notes" / "a.md").write_text("two\n")
        wait_for(lambda: len(events()) > 0, timeout=30)
        eid = str(events()[0]["id"])
        obj = str(root / "notes" / "a.md")
        # A hook that reported: the delivery chain doctor checks is whole.
        payload = {"session_id": "h1", "hook_event_name": "UserPromptSubmit", "cwd": str(root)}
        assert run(root, ("hook", "deliver"), json.dumps(payload).encode())[0] == 0
        assert run(root, ("events", "ack", "--session", sid), b"")[0] == 0
        broken: list[str] = []
        for cases in ROWS.values():
            for kind, raw, stdin in cases:
                args = tuple(
                    arg.replace(SID, sid).replace(EID, eid).replace(OBJ, obj) for arg in raw
                )
                code, out, err = run(root, args, stdin)
                problem = judge(kind, args, code, out, err)
                if problem is not None:
                    broken.append(
                        f"{' '.join(args)}: {problem}\n  exit {code}\n"
                        f"  out {out[:300]!r}\n  err {err[:300]!r}"
                    )
        assert broken == [], "\n".join(broken)
    finally:
        run(root, ("daemon", "stop"), b"")

"""Every command we suggest succeeds when run in the state where it was suggested.

``tests/test_named_commands.py`` proves each mentioned command parses; this runs them.
A scenario walks a project as a new user does; after each step, every concrete
``agentmonitors …`` its output names (backticked, or cued in running text, as that test
collects them) is run at once, in that state, and must exit 0. The README's and the
plugin skill's concrete commands are run the same way, in the order they appear, in a
project holding the ``docs`` monitor they talk about. New suggestions are covered as
they are written; only the kinds listed in :func:`runnable` are adapted or left out.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_named_commands import ROOT, Mention, in_hooks, in_markdown, in_text, is_placeholder

pytestmark = pytest.mark.slow

EXE = str(Path(sys.executable).parent / "agentmonitors")
DOCS = (
    "---\nname: Docs\nwatch:\n  type: file-fingerprint\n  globs: ['docs/**/*.md']\n---\nRead it.\n"
)


def run(root: Path, args: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [EXE, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=root,
        env={**os.environ},
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def runnable(words: tuple[str, ...]) -> list[str] | None:
    """The arguments to run a suggestion with, or None for one a test cannot run as is."""
    args = list(words)
    if not args or any(is_placeholder(word) for word in args):
        return None  # a template: the user fills it in
    if args[:2] in (["session", "start"], ["session", "end"], ["hook", "deliver"]):
        return None  # hooks read the host's payload (tests/transports/)
    if args[:2] == ["channel", "serve"] or args[:2] == ["events", "follow"]:
        return None  # stdio server / live follower (their own tests)
    if args[:2] == ["daemon", "run"] and "--detach" not in args:
        return None  # runs in the foreground until stopped
    if "--manual" in args:
        return None  # waits for the user's own change
    if args[:2] == ["events", "list"] and "--session" not in args:
        return None  # prose naming the command, not a command line
    if args[:2] == ["monitor", "approve"] and not {"--yes", "--list"} & set(args):
        # Approving is the user's act at a terminal; a script of theirs passes --yes.
        args.append("--yes")
    return args


def run_suggestions(root: Path, text: str, where: str, failures: list[str]) -> int:
    ran = 0
    for mention in in_text(text, where):
        args = runnable(mention.words)
        if args is None:
            continue
        code, _out, err = run(root, args)
        ran += 1
        if code != 0:
            failures.append(
                f"{where} suggests `agentmonitors {shlex.join(args)}`: exit {code}\n{err}"
            )
    return ran


def test_commands_suggested_by_messages_succeed_where_suggested(
    isolated_environment: Path,
) -> None:
    root = isolated_environment
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("one\n")
    steps = [
        ["session", "list"],  # no daemon, no database yet: says how to start one
        ["init", "--enable-only"],
        ["init"],  # no terminal: nothing scaffolded
        ["validate"],
        ["init", "--yes"],
        ["init", "docs", "--glob", "docs/**/*.md"],
        ["init", "poll", "--type", "command-poll", "--command", "true"],
        ["init", "site", "--type", "schedule"],
        ["validate"],
        ["monitor", "history", "docs"],
        ["monitor", "explain", "docs"],
        ["doctor"],
        ["daemon", "start"],
        ["doctor"],
        ["daemon", "stop"],
    ]
    failures: list[str] = []
    ran = 0
    try:
        for step in steps:
            _code, out, err = run(root, step)
            ran += run_suggestions(root, out + "\n" + err, " ".join(step), failures)
    finally:
        run(root, ["daemon", "stop"])
    assert failures == [], "\n".join(failures)
    assert ran >= 5  # the scenario does reach suggestions


def documented() -> list[Mention]:
    found: list[Mention] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "skills").rglob("*.md"))]:
        found += in_markdown(path)
    found += in_hooks(ROOT / "hooks" / "hooks.json")
    return found


def test_commands_in_the_readme_and_skill_succeed(isolated_environment: Path) -> None:
    root = isolated_environment
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("one\n")
    (root / ".claude" / "monitors" / "docs").mkdir(parents=True)
    (root / ".claude" / "monitors" / "docs" / "MONITOR.md").write_text(DOCS)
    failures: list[str] = []
    seen: set[tuple[str, ...]] = set()
    try:
        for mention in documented():
            args = runnable(mention.words)
            if args is None or mention.words in seen:
                continue
            seen.add(mention.words)
            if args[:1] == ["demo"]:
                continue  # its own test runs it (tests/cli/test_demo.py)
            code, _out, err = run(root, args)
            if code != 0:
                failures.append(f"{mention}: exit {code}\n{err}")
    finally:
        run(root, ["daemon", "stop"])
    assert failures == [], "\n".join(failures)
    assert len(seen) >= 20


def context_of(out: str) -> str:
    """What a hook's JSON puts before the model ("" when the hook printed nothing)."""
    if not out.strip():
        return ""
    context: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return context


def test_commands_suggested_to_a_session_succeed(isolated_environment: Path) -> None:
    """What the hooks tell an agent to run (the live-updates offer, a reminder, a
    recap of event blocks with their diffs) works in the state where the agent reads it."""
    from tests.transports.test_hook_end_to_end import NOTES, Project, deliver

    root = isolated_environment
    assert run(root, ["init", "--enable-only"])[0] == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES.format(urgency="normal"))
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    project = Project(root)
    failures: list[str] = []
    ran = 0
    try:
        out, err = project.start_session()
        ran += run_suggestions(root, context_of(out) + "\n" + err, "session start", failures)

        project.change(text="second\n")
        _code, out, _err = deliver(project.payload("UserPromptSubmit", prompt="hi"))
        ran += run_suggestions(root, context_of(out), "a reminder", failures)

        project.change(text="third\n")
        out, _err = project.start_session()  # SessionStart again: a compact's recap
        ran += run_suggestions(root, context_of(out), "a recap", failures)

    finally:
        run(root, ["daemon", "stop"])
    assert failures == [], "\n".join(failures)
    assert ran >= 4, ran

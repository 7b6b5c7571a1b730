"""The Claude Code plugin shipped at the repository root: manifests, hooks and the skill.

The hook commands are run for real with ``sh -c``, once with no ``agentmonitors`` on PATH
(the plugin installed before the CLI) and once with a stand-in ``agentmonitors`` that
records how it was called.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from ruamel.yaml import YAML

from agentmonitors.transports.live_hint import FOLLOW_DESCRIPTION
from agentmonitors.transports.rewake import (
    HOOK_TIMEOUT_S,
    MAX_WAIT_S,
    REWAKE_MESSAGE,
    REWAKE_SUMMARY,
)

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_MANIFEST = ROOT / ".claude-plugin" / "plugin.json"
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
HOOKS = ROOT / "hooks" / "hooks.json"
SKILL = ROOT / "skills" / "setup-monitors" / "SKILL.md"

# Which CLI command each hook event runs (README, "Delivering to Claude Code").
EXPECTED_ARGV = {
    "SessionStart": ["session", "start"],
    "UserPromptSubmit": ["hook", "deliver"],
    "PostToolUse": ["hook", "deliver"],
    "Stop": ["hook", "deliver"],
    "SessionEnd": ["session", "end"],
}
# The hooks Claude Code runs in the background with asyncRewake: an exit 2 (with stderr)
# starts a new turn, so these pass the CLI's exit code through.
REWAKE_ARGV = {"Stop": ["hook", "rewake"]}

_COMMON = {
    "session_id": "3f0c6d2e-5b1a-4c8e-9d7f-2a6b8c0e1f3d",
    "transcript_path": "/home/dev/.claude/projects/p/3f0c6d2e.jsonl",
    "cwd": "/home/dev/project – ünïcode",
}
# Payloads shaped like the ones Claude Code sends.
PAYLOADS: dict[str, dict[str, Any]] = {
    "SessionStart": {**_COMMON, "hook_event_name": "SessionStart", "source": "startup"},
    "UserPromptSubmit": {
        **_COMMON,
        "hook_event_name": "UserPromptSubmit",
        "permission_mode": "default",
        "prompt": "what changed?\n",
    },
    "PostToolUse": {
        **_COMMON,
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "description": "list"},
        "tool_response": {"stdout": "a\nb\n", "stderr": "", "interrupted": False},
    },
    "Stop": {
        **_COMMON,
        "hook_event_name": "Stop",
        "stop_hook_active": True,
        "last_assistant_message": "done",
    },
    "SessionEnd": {**_COMMON, "hook_event_name": "SessionEnd", "reason": "other"},
}

# Top-level verbs of the CLI contract (docs/cli.md); the skill may only name these.
CONTRACT_COMMANDS = {
    "init",
    "validate",
    "scan",
    "schema",
    "source",
    "monitor",
    "inbox",
    "daemon",
    "session",
    "events",
    "hook",
    "channel",
    "watch",
    "doctor",
    "verify",
    "demo",
    # The agent's read-only follow-ups (README, "For the agent").
    "snapshot",
    "diff",
    "summary",
    "inspect",
}
CONTRACT_SUBCOMMANDS = {
    "daemon": {"run", "once", "status", "stop"},
    "session": {"open", "close", "list", "start", "end"},
    "events": {"list", "ack", "follow"},  # follow: the live transport (issue 15)
    "hook": {"claim", "deliver", "rewake"},
    "monitor": {"test", "history", "explain", "approve"},  # approve: docs/security.md
    "source": {"list", "search", "install", "update", "remove"},
}


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def hook_commands(rewake: bool = False) -> dict[str, str]:
    """The one command each event runs in the foreground (with ``rewake``: the one it
    runs in the background with ``asyncRewake``)."""
    commands: dict[str, str] = {}
    for event, groups in load_json(HOOKS)["hooks"].items():
        entries = [hook for group in groups for hook in group["hooks"]]
        entries = [hook for hook in entries if hook.get("asyncRewake", False) is rewake]
        if rewake and not entries:
            continue
        assert len(entries) == 1, f"{event}: one command per event (one stdin stream)"
        commands[event] = entries[0]["command"]
    return commands


def payload_bytes(event: str) -> bytes:
    return json.dumps(PAYLOADS[event], ensure_ascii=False).encode("utf-8")


def shells() -> list[str]:
    """``/bin/sh`` plus any other POSIX shell here that is a different program."""
    found = ["/bin/sh"]
    seen = {os.path.realpath("/bin/sh")}
    for name in ("dash", "bash"):
        path = shutil.which(name)
        if path is not None and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            found.append(path)
    return found


SHELLS = shells()


def run_hook(
    shell: str, command: str, *, path: str, stdin: bytes, home: Path, **env: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [shell, "-c", command],
        input=stdin,
        capture_output=True,
        env={"PATH": path, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(home), **env},
        cwd=home,
        timeout=30,
        check=False,
    )


# ---------------------------------------------------------------------------- manifests


def test_plugin_manifest_keys() -> None:
    manifest = load_json(PLUGIN_MANIFEST)
    assert manifest["name"] == "agentmonitors"
    assert manifest["version"] == importlib.metadata.version("agentmonitors")
    assert isinstance(manifest["description"], str) and manifest["description"].strip()
    assert isinstance(manifest["author"]["name"], str)
    # hooks/hooks.json is auto-discovered; naming it here too loads it twice.
    assert "hooks" not in manifest
    # The MCP server is declared once, in the auto-discovered .mcp.json.
    assert "mcpServers" not in manifest


def test_plugin_skills_exist() -> None:
    skills = load_json(PLUGIN_MANIFEST)["skills"]
    assert skills == ["./skills/setup-monitors"]
    for entry in skills:
        assert entry.startswith("./")
        folder = (ROOT / entry).resolve()
        assert folder.is_relative_to(ROOT)
        assert (folder / "SKILL.md").is_file()


def test_marketplace_lists_the_plugin_at_its_own_folder() -> None:
    marketplace = load_json(MARKETPLACE)
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", marketplace["name"])
    assert isinstance(marketplace["owner"]["name"], str) and marketplace["owner"]["name"]
    entries = [p for p in marketplace["plugins"] if p["name"] == "agentmonitors"]
    assert len(entries) == 1
    source = entries[0]["source"]
    # Claude Code accepts only "./"-relative strings here (no ".", no absolute paths),
    # resolved from the marketplace root: the folder that holds .claude-plugin/.
    assert isinstance(source, str) and source.startswith("./")
    marketplace_root = MARKETPLACE.parent.parent
    plugin_root = (marketplace_root / source).resolve()
    assert (plugin_root / ".claude-plugin" / "plugin.json").is_file()
    assert plugin_root == PLUGIN_MANIFEST.parent.parent
    assert load_json(plugin_root / ".claude-plugin" / "plugin.json")["name"] == "agentmonitors"
    if "version" in entries[0]:
        assert entries[0]["version"] == load_json(PLUGIN_MANIFEST)["version"]


def test_mcp_servers_are_real_commands() -> None:
    """The plugin's MCP server (`channel serve`) is a command the CLI has."""
    servers: dict[str, Any] = load_json(ROOT / ".mcp.json")["mcpServers"]
    assert set(servers) == {"agentmonitors"}
    cli = shutil.which("agentmonitors", path=str(Path(sys.executable).parent))
    assert cli is not None
    for name, server in servers.items():
        assert server["command"] == "agentmonitors", name
        assert server["args"] == ["channel", "serve"], name
        result = subprocess.run(
            [cli, *server.get("args", []), "--help"], capture_output=True, check=False
        )
        assert result.returncode == 0, f"{name}: {server}"


# ---------------------------------------------------------------------------- hooks.json


def test_hooks_wire_exactly_the_five_events() -> None:
    hooks = load_json(HOOKS)
    assert set(hooks) == {"hooks"}
    assert set(hooks["hooks"]) == set(EXPECTED_ARGV)


@pytest.mark.parametrize("event", sorted(EXPECTED_ARGV))
def test_hook_entries_match_everything_and_run_commands(event: str) -> None:
    groups = load_json(HOOKS)["hooks"][event]
    assert len(groups) == 1 + (event in REWAKE_ARGV)
    for group in groups:
        assert group["matcher"] == ""
        assert group["hooks"]
        for hook in group["hooks"]:
            assert hook["type"] == "command"
            assert isinstance(hook["command"], str)
            assert "${CLAUDE_PLUGIN_ROOT}" not in hook["command"]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("event", sorted(EXPECTED_ARGV))
def test_hook_without_cli_is_silent_except_onboarding(
    event: str, shell: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for path in (str(empty), "/nonexistent"):
        result = run_hook(
            shell, hook_commands()[event], path=path, stdin=payload_bytes(event), home=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr == b""
        if event != "SessionStart":
            assert result.stdout == b""
            continue
        hint = json.loads(result.stdout.decode("utf-8"))
        assert hint["continue"] is True
        assert hint["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        context = hint["hookSpecificOutput"]["additionalContext"]
        assert "uv tool install ." in context
        assert "pipx install ." in context


def write_fake_cli(folder: Path, record: Path) -> None:
    """An ``agentmonitors`` that records argv and stdin, prints a marker and exits as told."""
    cat = shutil.which("cat")
    assert cat is not None
    folder.mkdir()
    script = folder / "agentmonitors"
    script.write_text(
        "#!/bin/sh\n"
        f'for arg in "$@"; do printf \'<%s>\' "$arg"; done >> {shlex.quote(str(record))}/argv\n'
        f"echo >> {shlex.quote(str(record))}/argv\n"
        f"{shlex.quote(cat)} >> {shlex.quote(str(record))}/stdin\n"
        "printf 'FAKE-STDOUT'\n"
        "printf 'FAKE-STDERR' >&2\n"
        'exit "${AGENTMONITORS_FAKE_EXIT:-0}"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)


@pytest.mark.parametrize("exit_code", [0, 3])
@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("event", sorted(EXPECTED_ARGV))
def test_hook_runs_the_cli_with_the_payload_unchanged(
    event: str, shell: str, exit_code: int, tmp_path: Path
) -> None:
    record = tmp_path / "record"
    record.mkdir()
    fake_bin = tmp_path / "fake-bin"
    write_fake_cli(fake_bin, record)
    stdin = payload_bytes(event)

    result = run_hook(
        shell,
        hook_commands()[event],
        path=str(fake_bin),
        stdin=stdin,
        home=tmp_path,
        AGENTMONITORS_FAKE_EXIT=str(exit_code),
    )

    assert result.returncode == 0
    # The CLI's stdout is the hook's stdout: no onboarding hint once the CLI exists.
    assert result.stdout == b"FAKE-STDOUT"
    assert result.stderr == b"FAKE-STDERR"
    calls = (record / "argv").read_text(encoding="utf-8").splitlines()
    assert calls == ["".join(f"<{arg}>" for arg in EXPECTED_ARGV[event])]
    # Byte for byte, including Stop's stop_hook_active (the CLI decides on it).
    assert (record / "stdin").read_bytes() == stdin


def test_the_rewake_hook_runs_in_the_background_and_ends_before_its_timeout() -> None:
    assert set(hook_commands(rewake=True)) == set(REWAKE_ARGV)
    (entry,) = [
        hook
        for group in load_json(HOOKS)["hooks"]["Stop"]
        for hook in group["hooks"]
        if hook.get("asyncRewake")
    ]
    assert entry["asyncRewake"] is True
    assert entry["timeout"] == HOOK_TIMEOUT_S > MAX_WAIT_S
    # Internal to Claude Code, honoured by 2.1.332 (tests/e2e/test_rewake.py sees them).
    assert (entry["rewakeSummary"], entry["rewakeMessage"]) == (REWAKE_SUMMARY, REWAKE_MESSAGE)


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("event", sorted(REWAKE_ARGV))
def test_rewake_hook_without_cli_is_silent(event: str, shell: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for path in (str(empty), "/nonexistent"):
        command = hook_commands(rewake=True)[event]
        result = run_hook(shell, command, path=path, stdin=payload_bytes(event), home=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.parametrize("exit_code", [0, 2])
@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("event", sorted(REWAKE_ARGV))
def test_rewake_hook_passes_the_cli_exit_code_through(
    event: str, shell: str, exit_code: int, tmp_path: Path
) -> None:
    """Exit 2 is the wake: a ``|| true`` would swallow it."""
    record = tmp_path / "record"
    record.mkdir()
    fake_bin = tmp_path / "fake-bin"
    write_fake_cli(fake_bin, record)
    stdin = payload_bytes(event)
    result = run_hook(
        shell,
        hook_commands(rewake=True)[event],
        path=str(fake_bin),
        stdin=stdin,
        home=tmp_path,
        AGENTMONITORS_FAKE_EXIT=str(exit_code),
    )
    assert result.returncode == exit_code
    assert (result.stdout, result.stderr) == (b"FAKE-STDOUT", b"FAKE-STDERR")
    calls = (record / "argv").read_text(encoding="utf-8").splitlines()
    assert calls == ["".join(f"<{arg}>" for arg in REWAKE_ARGV[event])]
    assert (record / "stdin").read_bytes() == stdin


# ---------------------------------------------------------------------------- the monitor

MONITORS = ROOT / "monitors" / "monitors.json"


def test_the_plugin_declares_one_always_armed_monitor_running_the_follower() -> None:
    """Auto-discovered as hooks/hooks.json is: naming it in plugin.json too would load it
    twice. Claude Code's entry schema is strict: these four keys and no other."""
    assert "monitors" not in load_json(PLUGIN_MANIFEST)
    [entry] = load_json(MONITORS)
    assert set(entry) == {"name", "command", "description", "when"}
    assert entry["when"] == "always"
    assert entry["description"] == FOLLOW_DESCRIPTION
    # ${VAR} would be Claude Code's substitution; $VAR is left to the shell.
    assert "${" not in entry["command"]


@pytest.mark.parametrize("shell", SHELLS)
def test_the_monitor_runs_the_follower_for_the_session(shell: str, tmp_path: Path) -> None:
    record = tmp_path / "record"
    record.mkdir()
    fake_bin = tmp_path / "fake-bin"
    write_fake_cli(fake_bin, record)
    [entry] = load_json(MONITORS)
    result = run_hook(
        shell,
        entry["command"],
        path=str(fake_bin),
        stdin=b"",
        home=tmp_path,
        CLAUDE_CODE_SESSION_ID="3f0c6d2e-5b1a-4c8e-9d7f-2a6b8c0e1f3d",
    )
    assert result.returncode == 0
    calls = (record / "argv").read_text(encoding="utf-8").splitlines()
    assert calls == ["<events><follow><--host-session><3f0c6d2e-5b1a-4c8e-9d7f-2a6b8c0e1f3d>"]


def test_without_the_cli_the_monitor_is_silent_and_stays(tmp_path: Path) -> None:
    """Every stdout line would be a model turn, and an exit is reported to the model."""
    [entry] = load_json(MONITORS)
    sleep = shutil.which("sleep")
    assert sleep is not None
    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "sleep").symlink_to(sleep)
    process = subprocess.Popen(
        ["/bin/sh", "-c", entry["command"]],
        env={"PATH": str(empty), "HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=1.0)
    finally:
        process.kill()
        out, _err = process.communicate()
    assert out == b""


# ---------------------------------------------------------------------------- the skill


def skill_parts() -> tuple[dict[str, Any], str]:
    text = SKILL.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, "SKILL.md starts with a --- frontmatter block"
    frontmatter = YAML(typ="safe").load(match.group(1))
    assert isinstance(frontmatter, dict)
    return frontmatter, match.group(2)


def test_skill_frontmatter() -> None:
    frontmatter, body = skill_parts()
    assert frontmatter["name"] == "setup-monitors" == SKILL.parent.name
    description = frontmatter["description"]
    assert isinstance(description, str) and description.strip()
    assert len(description) <= 1024
    assert body.strip()


@pytest.mark.parametrize(
    "command",
    [
        "agentmonitors init",
        "agentmonitors init <name> --type",
        "agentmonitors validate",
        "agentmonitors daemon run --detach --reap-after-ms 0",
        "agentmonitors daemon once",
        "agentmonitors session open",
        "--host-session-id test-$(date +%s)",
        "--format id",
        "agentmonitors events list",
        "--unread",
        "agentmonitors hook deliver",
        "agentmonitors monitor explain",
        "agentmonitors monitor history",
        "agentmonitors events ack",
        "agentmonitors daemon stop",
        "uv tool install .",
        "pipx install .",
    ],
)
def test_skill_mentions_the_commands_it_asks_for(command: str) -> None:
    _, body = skill_parts()
    assert command in body


def test_skill_is_about_this_project() -> None:
    _, body = skill_parts()
    assert "npm" not in body
    assert "@agentmonitors/cli" not in body
    for urgency in ("`high`", "`normal`", "`low`"):
        assert urgency in body
    assert "15 s" in body


def code_snippets(body: str) -> list[str]:
    fence = r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```"
    fenced = re.findall(fence, body, re.DOTALL | re.MULTILINE)
    rest = re.sub(fence, "", body, flags=re.DOTALL | re.MULTILINE)
    snippets = [block.replace("\\\n", " ") for block in fenced]
    snippets += re.findall(r"`([^`\n]+)`", rest)
    return [line for snippet in snippets for line in snippet.splitlines()]


def cli_invocations(body: str) -> list[list[str]]:
    """The argument lists that follow each ``agentmonitors`` in the skill's code."""
    stop = {"|", "||", "&&", ";", "&"}
    found: list[list[str]] = []
    for line in code_snippets(body):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)  # an unbalanced quote is a broken example: let it fail
        for index, token in enumerate(tokens):
            if token != "agentmonitors":
                continue
            args: list[str] = []
            for arg in tokens[index + 1 :]:
                if arg in stop:
                    break
                args.append(arg)
            found.append(args)
    return found


def test_skill_commands_exist_with_their_flags() -> None:
    """Every verb the skill uses is in the CLI contract and built, with its flags."""
    from agentmonitors.cli.app import cli

    _, body = skill_parts()
    invocations = cli_invocations(body)
    assert len(invocations) >= 10
    checked = 0
    for args in invocations:
        if not args or args[0].startswith("-"):
            assert args in ([], ["--version"]), args
            continue
        assert args[0] in CONTRACT_COMMANDS, args
        if len(args) > 1 and args[0] in CONTRACT_SUBCOMMANDS:
            assert args[1] in CONTRACT_SUBCOMMANDS[args[0]], args
        command: click.Command = cli
        rest = args
        while isinstance(command, click.Group) and rest:
            sub = command.get_command(click.Context(command), rest[0])
            assert sub is not None, f"{args}: {rest[0]} is not a command of {command.name}"
            command, rest = sub, rest[1:]
        assert not isinstance(command, click.Group), f"{args}: names no subcommand"
        checked += 1
        options = {
            opt: param
            for param in command.params
            if isinstance(param, click.Option)
            for opt in param.opts
        }
        takes_value = False
        for arg in rest:
            flag = arg.lstrip("[").split("=", 1)[0]
            if takes_value:
                takes_value = False  # e.g. `--command --porcelain`: a value, not a flag
            elif flag.startswith("--") and flag != "--help":
                assert flag in options, f"{args}: {flag} is not an option of {command.name}"
                takes_value = not options[flag].is_flag and "=" not in arg
    assert checked >= 5  # init, validate, daemon run/once/stop, monitor explain/history

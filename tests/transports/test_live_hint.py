"""SessionStart offers live updates: one sentence with the exact Monitor command line.

A real ``session start`` process reads Claude Code's SessionStart payload on stdin and
talks to a real (clocked) daemon; the command it names is then run for real. ``live:``
in the enable file switches the sentence off, and a value it does not know is reported
without breaking the hook.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.text import _socket_clause
from agentmonitors.transports.live_hint import FOLLOW_TIMEOUT_MS, host_listening, live_sentence
from agentmonitors.workspace import enable_file_path, live_setting, read_local_state
from tests.transports.clocked_project import Project
from tests.transports.test_follow import Follow, follow_records
from tests.transports.test_follow_host import Running
from tests.transports.test_message_commands import resolve
from tests.waiting import wait_for

OFFER = "AgentMon: live updates are available"
RUNNING = "AgentMon: live updates already run for this session"


def start_payload(project: Project, host: str, source: str = "startup") -> dict[str, Any]:
    """Claude Code's SessionStart payload, field for field."""
    return {
        "session_id": host,
        "transcript_path": str(project.root.parent / "home" / ".claude" / f"{host}.jsonl"),
        "cwd": project.ws,
        "hook_event_name": "SessionStart",
        "source": source,
    }


def session_start(project: Project, host: str, source: str = "startup") -> tuple[str, str]:
    """The additionalContext (``""`` when nothing is printed) and stderr."""
    code, out, err = project.hook(["session", "start"], start_payload(project, host, source))
    assert code == 0, err
    if not out:
        return "", err
    body = json.loads(out)
    assert body["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return str(body["hookSpecificOutput"]["additionalContext"]), err


def live_lines(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.startswith("AgentMon: live updates")]


def set_live(project: Project, value: str) -> None:
    """Add ``live: <value>`` to the enable file as a user would, by editing its text."""
    path = Path(enable_file_path(project.ws))
    head, sep, rest = path.read_text().partition("---\n")
    front, close, body = rest.partition("---\n")
    path.write_text(f"{head}{sep}{front}live: {value}\n{close}{body}")


def followed_command(line: str) -> str:
    [command] = [part for part in line.split("`") if part.startswith("agentmonitors ")]
    return command


@pytest.mark.slow
def test_the_sentence_names_this_sessions_follow_command_which_runs(
    clocked_project: Project,
) -> None:
    project = clocked_project
    context, _err = session_start(project, "host-live")
    session_id = project.session_id("host-live")
    [line] = live_lines(context)
    assert line.startswith(OFFER)
    assert f'description "AgentMon live updates", timeout_ms {FOLLOW_TIMEOUT_MS}' in line
    command = followed_command(line)
    socket = project.daemon.socket
    assert command == (
        f"agentmonitors events follow --session {session_id}{_socket_clause(socket)}"
    )
    assert "when its last line asks you to or it times out" in line
    assert line.count(". ") == 0 and line.endswith(".")  # one sentence
    assert resolve(command)[0].name == "follow"

    # The command as the Monitor tool would run it: a follower for this very session.
    words = shlex.split(command)
    assert words[:3] == ["agentmonitors", "events", "follow"]
    follow = Follow(project, session_id)
    try:
        wait_for(lambda: follow_records(session_id))
        # While it runs, a later SessionStart (after compaction) says so instead of
        # asking for a second follower.
        context, _err = session_start(project, "host-live", "compact")
        [line] = live_lines(context)
        assert line.startswith(RUNNING)
        assert followed_command(line) == command
    finally:
        follow.stop()


@pytest.mark.slow
@pytest.mark.parametrize("value", ["off", "OFF", "false", "no", '"off"', "off  # quiet"])
def test_live_off_drops_the_sentence_and_outlives_session_start(
    clocked_project: Project, value: str
) -> None:
    project = clocked_project
    set_live(project, value)
    context, err = session_start(project, "host-quiet")
    assert live_lines(context) == []
    assert "warning" not in err
    # Session start rewrote the enable file (socket, db): the setting is still there.
    assert live_setting(read_local_state(project.ws).live) is False
    context, _err = session_start(project, "host-quiet", "resume")
    assert live_lines(context) == []


@pytest.mark.slow
def test_live_on_keeps_the_sentence(clocked_project: Project) -> None:
    project = clocked_project
    set_live(project, "on")
    context, err = session_start(project, "host-on")
    assert len(live_lines(context)) == 1
    assert "warning" not in err
    assert read_local_state(project.ws).live == "on"  # kept by session start's rewrite


@pytest.mark.slow
def test_an_unknown_live_value_is_named_and_the_hook_still_answers(
    clocked_project: Project,
) -> None:
    project = clocked_project
    set_live(project, "sometimes")
    context, err = session_start(project, "host-typo")
    path = enable_file_path(project.ws)
    assert f"warning: {path}: live: 'sometimes' is not on or off" in err
    assert "live updates stay offered, the default" in err
    # The default applies and the output is the usual hook JSON.
    assert len(live_lines(context)) == 1
    # The value is kept for the user to fix, not silently dropped by the rewrite.
    assert read_local_state(project.ws).live == "sometimes"


@pytest.mark.slow
def test_no_sentence_without_a_monitor_and_one_for_a_user_monitor(
    clocked_project: Project,
) -> None:
    project = clocked_project
    monitors = project.root / ".claude" / "monitors"
    notes = monitors / "notes" / "MONITOR.md"
    text = notes.read_text()
    notes.unlink()
    (monitors / "README.md").write_text("# Our monitors\n")
    context, _err = session_start(project, "host-empty")
    assert live_lines(context) == []

    home = Path.home()
    user = home / ".claude" / "monitors" / "mine"
    user.mkdir(parents=True)
    (user / "MONITOR.md").write_text(text)
    context, _err = session_start(project, "host-user")
    assert len(live_lines(context)) == 1


def test_live_setting_spellings() -> None:
    assert live_setting(None) is True
    for word in ("on", "On", "true", "TRUE", "yes", " on "):
        assert live_setting(word) is True, word
    for word in ("off", "OFF", "false", "False", "no"):
        assert live_setting(word) is False, word
    for word in ("sometimes", "0", "1", "disabled", ""):
        assert live_setting(word) is None, word


def test_only_claude_code_is_offered_the_monitor_tool(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "monitors").mkdir(parents=True)
    (tmp_path / ".claude" / "monitors" / "a.md").write_text("---\n---\n")
    offered = live_sentence(str(tmp_path), None, "S1", "/run/a.sock", host="claude-code")
    assert offered.startswith(OFFER)
    assert live_sentence(str(tmp_path), None, "S1", "/run/a.sock", host="cursor") == ""


def test_the_enable_file_note_documents_the_setting() -> None:
    from agentmonitors.workspace import ENABLE_FILE_NOTE

    assert "`live: off`" in ENABLE_FILE_NOTE
    assert resolve("agentmonitors events follow")[0].name == "follow"


def test_enabling_a_disabled_project_keeps_its_live_setting(
    isolated_environment: Path, run_cli: Any
) -> None:
    path = Path(enable_file_path(str(isolated_environment)))
    path.parent.mkdir(parents=True)
    path.write_text("---\nenabled: false\nlive: off\n---\n")
    assert run_cli("init", "--enable-only").code == 0
    state = read_local_state(str(isolated_environment))
    assert state.enabled and state.live == "off"


ARMED = "AgentMon: live updates are on"


@pytest.mark.slow
def test_the_plugins_follower_replaces_the_offer(
    clocked_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interactive Claude Code arms the plugin's monitor itself: no Monitor to start."""
    project = clocked_project
    plugin_root = Path(__file__).resolve().parents[2]
    assert (plugin_root / "monitors" / "monitors.json").is_file()
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin_root))
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    context, _err = session_start(project, "host-interactive")
    [line] = live_lines(context)
    assert line.startswith(ARMED) and '"AgentMon live updates"' in line
    assert "Monitor tool" not in line and "--session" not in line
    # `claude -p` arms no plugin monitor: the Monitor tool is still offered there.
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
    context, _err = session_start(project, "host-print")
    assert live_lines(context)[0].startswith(OFFER)
    # A running plugin follower is known by its heartbeat, whatever the hook's environment.
    monkeypatch.delenv("CLAUDE_CODE_ENTRYPOINT")
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT")
    running = Running(project, env={"CLAUDE_CODE_SESSION_ID": "host-compacted"})
    try:
        project.start_session("host-compacted")
        wait_for(lambda: host_listening("host-compacted"), timeout=15)
        context, _err = session_start(project, "host-compacted", "compact")
        [line] = live_lines(context)
        assert line.startswith(ARMED)
    finally:
        running.stop()

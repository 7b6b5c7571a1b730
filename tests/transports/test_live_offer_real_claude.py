"""The live-updates sentence reaches the model of the real Claude Code (offline, spec'd
fake Messages API): the SessionStart hook's context lands in the first request, with the
exact ``events follow`` command for the daemon session Claude Code's session opened, and
is absent with ``live: off``. Skipped only where the CLI cannot be installed (failing
instead under the CI variable, as every real-client test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentmonitors.workspace import enable_file_path
from tests.e2e.claude_code import ClaudeCode, run_print
from tests.e2e.fake_messages_api import FakeMessagesApi
from tests.e2e.test_real_claude_code import (  # noqa: F401  (fixtures are used by name)
    claude_code,
    claude_env,
    daemon_session,
    fake_api,
    leak_check,
    wait_for_dormant,
    workspace,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SEEN = "SessionStart hook additional context: AgentMon: live updates are available"


def first_turn(claude: ClaudeCode, project: Path, env: dict[str, str]) -> str:
    """Run one ``claude -p`` turn; the Claude Code session id."""
    run = run_print(
        claude,
        "hello",
        cwd=project,
        env=env,
        args=["--output-format", "stream-json", "--verbose", "--include-hook-events"],
    )
    assert run.returncode == 0, run.describe()
    session_id = str(run.result["session_id"])
    wait_for_dormant(project, env, session_id)  # SessionEnd ran: nothing left running
    return session_id


def test_the_model_is_told_the_follow_command_for_its_session(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
) -> None:
    host = first_turn(claude_code, workspace, claude_env)
    session = daemon_session(workspace, claude_env, host)
    bodies = [request.raw for request in fake_api.messages_requests()]
    offered = [body for body in bodies if SEEN in body]
    assert offered, f"no request carries {SEEN!r}"
    # The exact command, as the request body holds it (JSON-escaped).
    text = json.loads(offered[0])
    flat = json.dumps(text, ensure_ascii=False)
    found = re.search(r"`(agentmonitors events follow --session (\S+) --socket [^`]+)`", flat)
    assert found is not None, flat[:2000]
    assert found.group(2) == session["id"]
    assert "timeout_ms 1800000" in flat
    start = flat.index(SEEN)
    print(f"first request holds: {flat[start : flat.index('times out.', start) + 10]}")


def test_live_off_keeps_the_sentence_from_the_model(
    claude_code: ClaudeCode,  # noqa: F811
    workspace: Path,  # noqa: F811
    claude_env: dict[str, str],  # noqa: F811
    fake_api: FakeMessagesApi,  # noqa: F811
) -> None:
    path = Path(enable_file_path(str(workspace)))
    path.write_text(path.read_text().replace("enabled: true\n", "enabled: true\nlive: off\n", 1))
    first_turn(claude_code, workspace, claude_env)
    bodies = [request.raw for request in fake_api.messages_requests()]
    assert bodies, "Claude Code never called the fake API"
    assert not any("live updates are available" in body for body in bodies)
    assert "live: off" in path.read_text()

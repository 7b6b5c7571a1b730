"""The Codex adapter on payloads the real Codex CLI sent (tests/fixtures/codex/), against a
real daemon with a test-set clock.

The fixtures were recorded from ``codex`` 0.169.0 running offline (see
tests/e2e/test_real_codex.py); only their folders were rewritten. Each test points the
payload's ``cwd`` at the test project and keeps everything else as Codex sent it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.transports.hosts import adapter_for
from agentmonitors.transports.hosts.base import DEREGISTER, POINTS
from agentmonitors.transports.hosts.codex import ADAPTER as CODEX
from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex"
THREAD = "01a241e4-0048-7f60-b96f-62865b9fd711"
LOW = """---
watch:
  type: file-fingerprint
  globs: "guides/*.md"
urgency: low
---
Look at the style guide when you are done.
"""


def low_change(project: Project) -> str:
    """A low-urgency monitor, then a change it records: what turn-idle delivers."""
    folder = project.root / ".claude" / "monitors" / "style"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(LOW)
    (project.root / "guides").mkdir()
    (project.root / "guides" / "style.md").write_text("tabs\n")
    for _ in range(2):  # the monitor's first look is its baseline
        project.daemon.advance(31)
        project.daemon.tick()
    before = set(project.states_any())
    (project.root / "guides" / "style.md").write_text("spaces\n")
    for _ in range(8):
        project.daemon.advance(31)
        project.daemon.tick()
        new = [event for event in project.states_any() if event not in before]
        if new:
            return new[0]
    raise AssertionError("the low monitor recorded no change")


def fixture(name: str, project: Project) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    payload["cwd"] = project.ws
    # The recordings come from several Codex runs: one thread id for all of them here.
    payload["session_id"] = THREAD
    return payload


def run_hook(project: Project, command: list[str], data: bytes) -> tuple[int, str, str]:
    """One hook process, as Codex starts it: ``data`` on stdin, in the project."""
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *command],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=project.root,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def start(project: Project, name: str = "session_start_startup") -> tuple[str, str]:
    payload = json.dumps(fixture(name, project)).encode()
    code, out, err = run_hook(project, ["session", "start", "--host", "codex"], payload)
    assert code == 0, err
    return out, err


def deliver(project: Project, payload: dict[str, Any] | str | bytes) -> tuple[int, str, str]:
    if isinstance(payload, dict):
        payload = json.dumps(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return run_hook(project, ["hook", "deliver", "--host", "codex"], data)


@pytest.fixture
def project(clocked_project: Project) -> Project:
    return clocked_project


def context_of(out: str, event: str) -> str:
    body = json.loads(out)
    assert body["hookSpecificOutput"]["hookEventName"] == event, body
    text: str = body["hookSpecificOutput"]["additionalContext"]
    return text


def test_the_fixtures_are_what_codex_sends() -> None:
    """The fields the adapter reads are in every recorded payload, as Codex names them."""
    names = sorted(path.stem for path in FIXTURES.glob("*.json"))
    assert names == [
        "post_tool_use",
        "session_start_compact",
        "session_start_resume",
        "session_start_startup",
        "stop",
        "stop_active",
        "user_prompt_submit",
    ]
    for name in names:
        data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
        payload = CODEX.normalise(data)
        assert payload.session_id == data["session_id"]
        assert payload.hook_event_name == data["hook_event_name"]
        assert payload.cwd == data["cwd"]
        if name.startswith("session_start"):
            assert payload.source == name.removeprefix("session_start_")
            assert payload.turn_id is None  # SessionStart runs at thread scope
        else:
            assert payload.turn_id == data["turn_id"]
        assert payload.stop_guard is (name == "stop_active")


def test_the_adapter_is_codex_and_names_what_it_cannot_reach() -> None:
    assert adapter_for("codex") is CODEX
    assert CODEX.name == "codex" and CODEX.session_end_event is None
    assert CODEX.reaches == frozenset(POINTS) - {DEREGISTER}
    [(point, instead)] = CODEX.unreachable()
    assert point == DEREGISTER
    assert "no SessionEnd" in instead and "idle" in instead
    assert CODEX.nothing == ""


def test_session_start_registers_a_codex_session(project: Project) -> None:
    out, err = start(project)
    host = fixture("session_start_startup", project)["session_id"]
    assert "AgentMon: session" in err
    # Nothing pending, so no recap; and no live-updates offer: Codex has no Monitor tool.
    assert out == ""
    [record] = [s for s in project.ipc("session.list", {}) if s["hostSessionId"] == host]
    assert record["adapter"] == "codex"
    assert record["workspacePath"] == project.ws
    assert record["status"] == "active"


def test_prompt_and_tool_hooks_inject_additional_context(project: Project) -> None:
    start(project)
    project.settled_change()
    code, out, err = deliver(project, fixture("user_prompt_submit", project))
    assert code == 0, err
    assert context_of(out, "UserPromptSubmit").startswith("AgentMon:")
    assert "notes/a.txt" in out
    # Claimed: the next prompt has nothing, and nothing is empty stdout for Codex.
    assert deliver(project, fixture("user_prompt_submit", project)) == (0, "", "")

    project.settled_change("again\n")
    code, out, err = deliver(project, fixture("post_tool_use", project))
    assert code == 0, err
    assert context_of(out, "PostToolUse").startswith("AgentMon:")


def test_stop_blocks_with_a_reason_once_and_the_guard_holds(project: Project) -> None:
    start(project)
    event = low_change(project)
    # The guarded Stop (Codex already continuing for a Stop hook) injects nothing ...
    assert deliver(project, fixture("stop_active", project)) == (0, "", "")
    host = fixture("stop", project)["session_id"]
    assert project.states(host)[event] == "unread"
    # ... and the next normal Stop continues the turn with the change as the reason.
    code, out, err = deliver(project, fixture("stop", project))
    assert code == 0, err
    body = json.loads(out)
    assert set(body) == {"decision", "reason"}, body
    assert body["decision"] == "block"
    assert body["reason"].startswith("AgentMon: Monitored changes are pending")
    assert project.states(host)[event] == "claimed"


def test_compact_session_start_recaps_what_is_unread(project: Project) -> None:
    start(project)
    project.settled_change()
    out, _err = start(project, "session_start_compact")
    text = context_of(out, "SessionStart")
    assert "AgentMon:" in text and "notes/a.txt" in text


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[1, 2]", b'{"session_id": 7}', b"\xff\xfe{"],
)
def test_bad_payloads_print_nothing_and_exit_0(project: Project, raw: bytes) -> None:
    start(project)
    project.settled_change()
    assert deliver(project, raw)[:2] == (0, "")


def test_stray_bytes_before_the_payload_are_skipped(project: Project) -> None:
    start(project)
    project.settled_change()
    raw = "shell banner\n" + json.dumps(fixture("user_prompt_submit", project))
    code, out, _err = deliver(project, raw)
    assert code == 0
    assert context_of(out, "UserPromptSubmit").startswith("AgentMon:")


def test_doctor_says_a_codex_session_has_no_session_end(project: Project) -> None:
    start(project)
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=project.root,
    )
    report = json.loads(done.stdout)
    checks = report["checks"] if isinstance(report, dict) else report
    [check] = [c for c in checks if c["name"] == "host:codex"]
    assert check["status"] == "pass"
    assert "no SessionEnd hook" in check["detail"] and "idle" in check["detail"]

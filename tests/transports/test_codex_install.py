"""``init --host codex``'s installer: our hooks merged into ``.codex/hooks.json``.

The real Codex CLI reading the written file (and running it once trusted) is proven in
tests/e2e/test_real_codex.py; these tests pin the merge rules.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.transports.hosts.codex_install import (
    HOOKS_RELPATH,
    TRUST_STEP,
    CodexHooksError,
    codex_hooks,
    install_codex_hooks,
    notes,
)

EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"]


def read(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / HOOKS_RELPATH).read_text(encoding="utf-8"))
    return data


def ours(data: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        handler
        for group in data["hooks"][event]
        for handler in group["hooks"]
        if "agentmonitors" in handler.get("command", "")
    ]


def test_a_fresh_project_gets_one_hook_per_event(tmp_path: Path) -> None:
    result = install_codex_hooks(str(tmp_path))
    assert result.path == str(tmp_path / ".codex" / "hooks.json")
    assert list(result.added) == EVENTS
    data = read(tmp_path)
    assert list(data["hooks"]) == EVENTS
    for event in EVENTS:
        [handler] = ours(data, event)
        assert handler["type"] == "command"
        assert "--host codex" in handler["command"]
        assert isinstance(handler["timeout"], int) and handler["timeout"] > 0
    assert "agentmonitors session start --host codex" in ours(data, "SessionStart")[0]["command"]
    for event in ("UserPromptSubmit", "PostToolUse", "Stop"):
        assert "agentmonitors hook deliver --host codex" in ours(data, event)[0]["command"]
    assert "SessionEnd" not in data["hooks"]  # Codex has none; an unknown name is ignored


def test_a_second_run_changes_nothing(tmp_path: Path) -> None:
    install_codex_hooks(str(tmp_path))
    path = tmp_path / HOOKS_RELPATH
    before = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    result = install_codex_hooks(str(tmp_path))
    assert result.added == () and not result.changed
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == stamp  # not even rewritten


def test_what_is_there_is_kept(tmp_path: Path) -> None:
    theirs = {"type": "command", "command": "./scripts/lint.sh", "timeout": 5}
    existing = {
        "description": "team hooks",
        "hooks": {
            "Stop": [{"matcher": "", "hooks": [theirs]}],
            "PreToolUse": [{"matcher": "^Bash$", "hooks": [theirs]}],
        },
    }
    (tmp_path / ".codex").mkdir()
    (tmp_path / HOOKS_RELPATH).write_text(json.dumps(existing), encoding="utf-8")
    install_codex_hooks(str(tmp_path))
    data = read(tmp_path)
    assert data["description"] == "team hooks"
    assert data["hooks"]["PreToolUse"] == existing["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == {"matcher": "", "hooks": [theirs]}
    assert len(ours(data, "Stop")) == 1


def test_an_older_form_of_ours_is_replaced_in_place(tmp_path: Path) -> None:
    old = {"type": "command", "command": "agentmonitors hook deliver --host codex", "timeout": 9}
    duplicate = dict(old)
    existing = {"hooks": {"Stop": [{"hooks": [old, duplicate]}]}}
    (tmp_path / ".codex").mkdir()
    (tmp_path / HOOKS_RELPATH).write_text(json.dumps(existing), encoding="utf-8")
    result = install_codex_hooks(str(tmp_path))
    assert "Stop" in result.added
    data = read(tmp_path)
    assert len(data["hooks"]["Stop"]) == 1
    [handler] = ours(data, "Stop")
    assert handler["command"] == codex_hooks()["Stop"][0]
    assert handler["timeout"] == codex_hooks()["Stop"][1]


def test_claude_code_hooks_in_the_file_are_not_taken_for_ours(tmp_path: Path) -> None:
    claude = {"type": "command", "command": "agentmonitors hook deliver"}
    (tmp_path / ".codex").mkdir()
    (tmp_path / HOOKS_RELPATH).write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [claude]}]}}), encoding="utf-8"
    )
    install_codex_hooks(str(tmp_path))
    handlers = [h for group in read(tmp_path)["hooks"]["Stop"] for h in group["hooks"]]
    assert handlers[0] == claude and len(handlers) == 2


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1]", "expected a JSON object"),
        ('{"hooks": []}', "field 'hooks' must be an object"),
        ('{"hooks": {"Stop": {}}}', "field 'hooks.Stop' must be a list"),
    ],
)
def test_a_file_that_cannot_be_merged_is_an_error_and_left_alone(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / ".codex").mkdir()
    path = tmp_path / HOOKS_RELPATH
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CodexHooksError) as failure:
        install_codex_hooks(str(tmp_path))
    assert str(failure.value).startswith(f"{path}: ")
    assert problem in str(failure.value)
    assert path.read_text(encoding="utf-8") == text


def test_without_the_cli_session_start_tells_the_model_why(tmp_path: Path) -> None:
    """The SessionStart command, run by a shell whose PATH lacks agentmonitors."""
    command = codex_hooks()["SessionStart"][0]
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent", "HOME": str(tmp_path)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    body = json.loads(done.stdout)
    text = body["hookSpecificOutput"]["additionalContext"]
    assert body["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "not on your PATH" in text
    deliver = codex_hooks()["Stop"][0]
    done = subprocess.run(
        ["/bin/sh", "-c", deliver],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent"},
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "")  # nothing, which Codex reads as no-op


def test_init_gets_created_then_unchanged_then_updated(tmp_path: Path) -> None:
    """The entry ``init --host`` calls (``install.install_hooks``) reports what it did."""
    from agentmonitors.transports.hosts.install import (
        CREATED,
        UNCHANGED,
        UPDATED,
        HookInstallError,
        install_hooks,
    )

    first = install_hooks("codex", str(tmp_path))
    assert first is not None and first.status == CREATED
    assert first.path == str(tmp_path / HOOKS_RELPATH)
    assert any("`/hooks`" in note for note in first.notes)
    second = install_hooks("codex", str(tmp_path))
    assert second is not None and second.status == UNCHANGED
    data = read(tmp_path)
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 1
    (tmp_path / HOOKS_RELPATH).write_text(json.dumps(data), encoding="utf-8")
    third = install_hooks("codex", str(tmp_path))
    assert third is not None and third.status == UPDATED
    (tmp_path / HOOKS_RELPATH).write_text("[]", encoding="utf-8")
    with pytest.raises(HookInstallError):
        install_hooks("codex", str(tmp_path))


def test_the_notes_name_the_trust_step_and_the_missing_session_end() -> None:
    trust, dormancy = notes()
    assert trust == f"One step is yours: {TRUST_STEP}"
    assert "`/hooks`" in TRUST_STEP and "without a word" in TRUST_STEP
    assert "no SessionEnd hook" in dormancy and "30 minutes" in dormancy

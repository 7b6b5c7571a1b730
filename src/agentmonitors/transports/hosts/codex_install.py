"""``init --host codex``: our hooks in the project's ``.codex/hooks.json``, merged.

Codex reads ``hooks.json`` beside each config layer, the project's ``.codex/`` folder
included, in Claude Code's shape: ``{"hooks": {"<Event>": [{"matcher": ..., "hooks":
[{"type": "command", "command": ..., "timeout": ...}]}]}}``. What is already there is
kept as written; our entries are recognised by their command (``agentmonitors ...
--host codex``), so a second run changes nothing and an older form of ours is replaced
in place rather than doubled. A file that is not a JSON object with an object
``hooks`` is an error naming it, and is left untouched.

Codex runs a project's hooks only when the project is trusted and each hook has been
reviewed and trusted once (``/hooks``); until then it skips them without a word. The
installer cannot do that for the user: :data:`TRUST_STEP` says how.
"""

from __future__ import annotations

import json
import os

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.transports.hosts.install import (
    CREATED,
    UNCHANGED,
    UPDATED,
    HookInstallError,
    Installed,
    read_json_object,
    when_installed,
    write_json,
)

HOOKS_RELPATH = os.path.join(".codex", "hooks.json")
HOST_FLAG = "--host codex"

_MISSING_CLI = (
    "The agentmonitors hooks are installed for Codex, but the agentmonitors CLI is not on "
    "your PATH, so no monitors are watched. Install the Python CLI (from a checkout of the "
    "agentmonitors repository: uv tool install . or pipx install .), then start a new session."
)


def _deliver_command() -> str:
    return (
        f"command -v agentmonitors >/dev/null 2>&1 && agentmonitors hook deliver {HOST_FLAG}"
        " || true"
    )


def _session_start_command() -> str:
    # Plain stdout at SessionStart reaches the model in Codex: say why nothing is watched.
    advisory = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": _MISSING_CLI}}
    )
    quoted = "'" + advisory.replace("'", "'\\''") + "'"
    return when_installed(f"agentmonitors session start {HOST_FLAG}", f"'%s' {quoted}")


# Event → (command, timeout in seconds). Codex's own default is 600 s; a hook of ours
# that has not answered in far less is stuck, and Codex then goes on without it.
# SessionStart may boot the daemon, so it gets longer.
def codex_hooks() -> dict[str, tuple[str, int]]:
    deliver = _deliver_command()
    return {
        "SessionStart": (_session_start_command(), 60),
        "UserPromptSubmit": (deliver, 30),
        "PostToolUse": (deliver, 30),
        "Stop": (deliver, 30),
    }


TRUST_STEP = (
    "Codex runs project hooks only in a trusted project, and only after each hook is "
    "trusted once: open `codex` in this project (accept its trust prompt if it asks), run "
    "`/hooks`, and trust the agentmonitors hooks. Until then Codex skips them without a "
    "word, and it asks again whenever .codex/hooks.json changes."
)


class CodexHooksError(HookInstallError):
    """The existing hooks file cannot be merged; the message names it and why."""


@dataclass(frozen=True)
class CodexInstall:
    path: str
    added: tuple[str, ...]
    """Events whose hook was written or brought up to date."""
    existed: bool = True
    """Whether the file was there before."""

    @property
    def changed(self) -> bool:
        return bool(self.added)


def _is_ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return isinstance(command, str) and "agentmonitors" in command and HOST_FLAG in command


def _load(path: str) -> dict[str, object] | None:
    """The hooks file as an object we can merge into; None when there is none yet."""
    try:
        data = read_json_object(path)
    except HookInstallError as error:
        raise CodexHooksError(f"{error}; left unchanged") from None
    if data is None:
        return None
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise CodexHooksError(f"{path}: field 'hooks' must be an object; left unchanged")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise CodexHooksError(
                f"{path}: field 'hooks.{event}' must be a list of matcher groups; left unchanged"
            )
    return data


def _merge_event(groups: list[object], command: str, timeout: int) -> bool:
    """Put our handler into ``groups``; True when that changed anything."""
    wanted = {"type": "command", "command": command, "timeout": timeout}
    found = False
    changed = False
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        handlers: list[object] = group["hooks"]
        for index, handler in enumerate(handlers):
            if not _is_ours(handler):
                continue
            if found:  # a duplicate of ours: one is enough
                handlers[index] = None
                changed = True
            elif handler != wanted:
                handlers[index] = wanted
                changed = True
            found = True
        if None in handlers:
            group["hooks"] = [handler for handler in handlers if handler is not None]
    if not found:
        groups.append({"hooks": [wanted]})
        changed = True
    return changed


def install_codex_hooks(project: str) -> CodexInstall:
    """Merge our hooks into ``<project>/.codex/hooks.json``; idempotent."""
    path = os.path.join(project, HOOKS_RELPATH)
    loaded = _load(path)
    data = {} if loaded is None else loaded
    hooks = data.setdefault("hooks", {})
    assert isinstance(hooks, dict)
    added: list[str] = []
    for event, (command, timeout) in codex_hooks().items():
        groups = hooks.setdefault(event, [])
        assert isinstance(groups, list)
        if _merge_event(groups, command, timeout):
            added.append(event)
    if added:
        write_json(path, data)
    return CodexInstall(path, tuple(added), loaded is not None)


def notes() -> tuple[str, ...]:
    """What the user must still do, and what Codex cannot do."""
    return (
        f"One step is yours: {TRUST_STEP}",
        "Codex has no SessionEnd hook: a Codex session goes dormant after 30 minutes "
        "without a prompt (`agentmonitors doctor` says so too).",
    )


def install(workspace: str) -> Installed:
    """``init --host codex``: merge our hooks, and say what is left to do."""
    result = install_codex_hooks(workspace)
    status = UNCHANGED if not result.changed else UPDATED if result.existed else CREATED
    return Installed(result.path, status, notes())

"""``init --host cursor``: our three hooks in ``.cursor/hooks.json``.

Cursor ignores the whole file when one event name is unknown to it, silently, so only
names Cursor documents are written (``sessionStart``, ``stop``, ``sessionEnd``), and a
file that is already there is merged entry by entry, never rewritten from scratch.
Each command prints ``{}`` (Cursor's "nothing") when the CLI is not on the PATH.
"""

from __future__ import annotations

import os

from agentmonitors.transports.hosts.cursor import LOOP_LIMIT
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

HOOKS_FILE = os.path.join(".cursor", "hooks.json")
VERSION = 1


def _guarded(command: str) -> str:
    return when_installed(command, "'{}'")


# event -> (the command our entry runs, extra keys of the entry)
ENTRIES: dict[str, tuple[str, dict[str, object]]] = {
    "sessionStart": ("agentmonitors session start --host cursor", {}),
    "stop": ("agentmonitors hook deliver --host cursor", {"loop_limit": LOOP_LIMIT}),
    "sessionEnd": ("agentmonitors session end --host cursor", {}),
}


def _entries(hooks: dict[str, object], event: str, path: str) -> list[object]:
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise HookInstallError(f"{path}: hooks.{event} must be a list of hook entries")
    return entries


def _present(entries: list[object], command: str) -> bool:
    return any(
        isinstance(entry, dict)
        and isinstance(entry.get("command"), str)
        and command in entry["command"]
        for entry in entries
    )


def install(workspace: str) -> Installed:
    path = os.path.join(workspace, HOOKS_FILE)
    existing = read_json_object(path)
    data: dict[str, object] = {} if existing is None else existing
    added = "version" not in data  # Cursor reads no file without it
    version = data.setdefault("version", VERSION)
    if version != VERSION:
        raise HookInstallError(
            f"{path}: version is {version!r}; only version {VERSION} is known, so it is "
            "left as it is"
        )
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise HookInstallError(f"{path}: hooks must be a JSON object of event names")
    for event, (command, extra) in ENTRIES.items():
        entries = _entries(hooks, event, path)
        if not _present(entries, command):
            entries.append({"command": _guarded(command), **extra})
            added = True
    if existing is not None and not added:
        return Installed(path, UNCHANGED)
    write_json(path, data)
    return Installed(path, CREATED if existing is None else UPDATED)

"""``agentmonitors init --host``: write a host's project hook file, merged, never clobbered.

Each host with a project hook file has a ``<host>_install`` module beside its adapter
with ``install(workspace) -> Installed``. Claude Code has none: its hooks come with the
plugin. An installer adds only the entries that are missing (an entry that already
runs the same ``agentmonitors`` command counts as present, whatever else it says),
keeps everything else in the file as it was, and writes atomically; running it twice
changes nothing the second time.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from agentmonitors.untrusted import read_bounded

CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"


class HookInstallError(Exception):
    """The existing hook file cannot be merged; the message names the file and why."""


class Installed(NamedTuple):
    path: str
    status: str
    """:data:`CREATED`, :data:`UPDATED` or :data:`UNCHANGED`."""
    notes: tuple[str, ...] = ()
    """What the user must still do (Codex's one-time trust step, say)."""


def when_installed(command: str, otherwise: str) -> str:
    """A hook's shell command: ``command`` when the CLI is on the PATH (its failure never
    fails the hook), else ``printf`` with the arguments ``otherwise``, the host's "nothing"
    or a word on why nothing is watched."""
    return (
        f"if command -v agentmonitors >/dev/null 2>&1; then {command} || true; "
        f"else printf {otherwise}; fi"
    )


def install_hooks(host: str, workspace: str) -> Installed | None:
    """Install ``host``'s project hooks in ``workspace``; None when it has no hook file."""
    module_name = f"agentmonitors.transports.hosts.{host.replace('-', '_')}_install"
    try:
        module = __import__(module_name, fromlist=["install"])
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        return None
    installed: Installed = module.install(workspace)
    return installed


HOOK_FILE_CAP = 1024 * 1024
"""Largest host hook file (``.codex/hooks.json``, ``.cursor/hooks.json``) read, in bytes."""


def read_json_object(path: str) -> dict[str, object] | None:
    """The JSON object in ``path``; None when the file does not exist.

    The file is the project's: only a regular file of at most :data:`HOOK_FILE_CAP`
    bytes is read (a FIFO or a device there cannot hang ``init``).
    """
    try:
        text = read_bounded(path, HOOK_FILE_CAP).decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise HookInstallError(f"{path}: cannot read it: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise HookInstallError(f"{path}: not valid UTF-8 (byte {error.start})") from error
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError as error:
        raise HookInstallError(f"{path}: nested too deeply to read; fix or move it") from error
    except ValueError as error:
        raise HookInstallError(f"{path}: not valid JSON ({error}); fix or move it") from error
    if not isinstance(data, dict):
        raise HookInstallError(f"{path}: expected a JSON object at the top level")
    return data


def write_json(path: str, data: dict[str, object]) -> None:
    """Write ``data`` to ``path`` atomically, two-space indented, with a final newline."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(temporary, path)

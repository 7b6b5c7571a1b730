"""The ``CODEX_HOME`` each Codex session runs under, recorded when it starts.

See docs/architecture.md, "Transports" (codex-queue). Codex keeps its app-server
daemon's control socket, its managed CLI and what marks its TUIs under ``CODEX_HOME``,
so a thread started with a home of its own (a second profile, a sandboxed one) can be
probed and woken only there, whatever environment the agentmonitors daemon was started
from. The SessionStart hook runs in the session's environment: it records that home
here, and the daemon reads it back per thread, falling back to its own environment's.
The record lives in the user's data folder, not in the project, whose files anyone who
wrote the repository could have put there (the daemon runs the CLI found under a home).
Standard library only: the hook path imports it.
"""

from __future__ import annotations

import os

from agentmonitors.paths import encode_host_session_id
from agentmonitors.workspace import data_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["codex_home", "record_name", "record_session_home", "records_folder", "session_home"]

MAX_HOME_BYTES = 4096


def codex_home(environ: Mapping[str, str]) -> str:
    """``$CODEX_HOME``, else ``~/.codex`` (Codex's own default); absolute."""
    explicit = environ.get("CODEX_HOME")
    if explicit:
        return os.path.abspath(explicit)
    return os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".codex")


def records_folder() -> str:
    """Where the records are: one file per thread (pruned by the daemon once stale,
    ``delivery/stale_records.py``)."""
    return os.path.join(data_root(), "agentmonitors", "codex-homes")


def record_name(thread_id: str) -> str:
    """The file name of ``thread_id``'s record in :func:`records_folder`."""
    return encode_host_session_id(thread_id) + ".home"


def _record_path(thread_id: str) -> str:
    return os.path.join(records_folder(), record_name(thread_id))


def record_session_home(thread_id: str, environ: Mapping[str, str]) -> None:
    """Remember the home ``thread_id`` runs under (atomically: a reader sees one whole)."""
    path = _record_path(thread_id)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(codex_home(environ))
    os.replace(partial, path)


def session_home(thread_id: str) -> str | None:
    """The home recorded for ``thread_id``, or None when its start recorded none."""
    try:
        with open(_record_path(thread_id), encoding="utf-8") as handle:
            home = handle.read(MAX_HOME_BYTES + 1).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not home or len(home) > MAX_HOME_BYTES or not os.path.isabs(home) or "\0" in home:
        return None
    return home

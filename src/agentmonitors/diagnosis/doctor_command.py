"""``doctor``'s ``hook-command`` check: the command every hook runs, as the host finds it.

The hook files run ``command -v agentmonitors >/dev/null 2>&1 && agentmonitors hook
deliver || true``: without ``agentmonitors`` on the host's PATH every hook does nothing,
silently. The check also reads the console script found there: one written by pip
before 25.0 imports ``re`` before agentmonitors, which costs every hook about half of
the interpreter's own start (docs/architecture.md, "Speed").
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

COMMAND = "agentmonitors"
# The head of a console script is all the check reads: the shebang and a few imports.
HEAD_BYTES = 2048


def slow_launcher(script: str) -> bool:
    """Whether ``script`` is a Python console script importing ``re`` before our entry."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    if not head.startswith(b"#!"):
        return False  # a binary launcher or a shell shim: nothing to say about it
    lines = head.decode("utf-8", errors="replace").splitlines()
    for line in lines[1:]:
        if line.startswith(("from agentmonitors", "import agentmonitors")):
            return False
        if line.strip() == "import re":
            return True
    return False


def hook_command_check(path_variable: str | None = None) -> dict[str, Any]:
    """The ``hook-command`` check for ``path_variable`` (this process's PATH by default)."""
    found = shutil.which(COMMAND, path=path_variable)
    if found is None:
        here = os.path.dirname(sys.executable)
        return {
            "name": "hook-command",
            "status": "fail",
            "detail": (
                f"no `{COMMAND}` on PATH: the hooks run `command -v {COMMAND} && {COMMAND}"
                " hook deliver || true`, so every hook does nothing and no change reaches a"
                " session"
            ),
            "remediation": (
                f"put `{COMMAND}` on the PATH the host starts with: `uv tool install .` or"
                " `pipx install .` from a checkout (then `uv tool update-shell` or `pipx"
                f" ensurepath`), or add {here} to PATH"
            ),
        }
    detail = f"`{COMMAND}` on PATH is {found}"
    if slow_launcher(found):
        detail += (
            " (advisory: its console script, written by pip older than 25, imports `re`"
            " before agentmonitors, which adds about half of Python's own start to every"
            " hook; reinstall with pip 25 or later, or with uv)"
        )
    return {"name": "hook-command", "status": "pass", "detail": detail, "remediation": None}

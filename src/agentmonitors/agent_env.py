"""Whether an agent host runs this process: the variables the agent tools set.

One list for every question that depends on it: the output format an agent gets by
default (TOON) and whether an approval may be recorded (never where an agent runs the
command, docs/security.md). Standard library only; a leaf every package may use.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Set to a true value by the agent TUIs for the commands they run ("0"/"false": unset).
AGENT_FLAGS = ("CLAUDECODE", "CURSOR_AGENT", "GEMINI_CLI", "CODEX_SANDBOX", "OPENCODE")
# Present only in processes an agent host started, whatever their value.
AGENT_MARKERS = (
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_THREAD_ID",
    "OPENCODE_SERVER",
    "AIDER_MODEL",
)


def agent_variable(env: Mapping[str, str] | None = None) -> str | None:
    """The first agent-host variable set in ``env`` (the process's own by default)."""
    environ = os.environ if env is None else env
    for name in AGENT_FLAGS:
        if environ.get(name, "") not in {"", "0", "false"}:
            return name
    for name in AGENT_MARKERS:
        if environ.get(name):
            return name
    return None


def running_under_agent(env: Mapping[str, str] | None = None) -> bool:
    """Whether an agent host runs this process (see :func:`agent_variable`)."""
    return agent_variable(env) is not None

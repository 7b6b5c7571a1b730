"""What a command-poll monitor must have approved, read without the source's module.

``validate`` asks every project monitor's approval; this module (with ``plain.py``)
answers it without the observing code (docs/architecture.md, "Speed"). The source
class asks the same :func:`approval_of`, so both answers are one.
"""

from __future__ import annotations

import os

from agentmonitors.sources.command_poll.plain import CommandPollSettings, plain_config
from agentmonitors.sources.reach import command_approval

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from agentmonitors.sources.traits import Approval


def resolve_cwd(cwd: str | None, workspace_path: str | None) -> str | None:
    """The child's working folder (``cwd``); None means the daemon's own."""
    if cwd is None or cwd == "":
        return workspace_path or None
    if os.path.isabs(cwd) or not workspace_path:
        return cwd
    return os.path.normpath(os.path.join(workspace_path, cwd))


def approval_of(settings: CommandPollSettings, workspace: str) -> Approval:
    """A command always needs approval: its argv, folder and env."""
    return command_approval(
        settings.command, settings.cwd, settings.env, resolve_cwd(settings.cwd, workspace)
    )


def approval(config: Mapping[str, Any], workspace: str) -> Approval:
    """``approval_of`` the standard-library reading; ``Unexpected`` when it is unsure."""
    return approval_of(plain_config(config), workspace)

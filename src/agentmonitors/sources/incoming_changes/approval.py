"""What an incoming-changes monitor must have approved, read without the source's module.

``validate`` asks every project monitor's approval; this module (with ``plain.py``)
answers it without the observing code (docs/architecture.md, "Speed"). The source
class asks the same :func:`approval_of`, so both answers are one.
"""

from __future__ import annotations

from agentmonitors.sources.incoming_changes.plain import IncomingChangesSettings, plain_config
from agentmonitors.sources.reach import repository_approval

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from agentmonitors.sources.traits import Approval


def approval_of(settings: IncomingChangesSettings, workspace: str) -> Approval | None:
    """A repository outside the workspace needs approval; one inside needs none."""
    return repository_approval(settings.cwd, workspace)


def approval(config: Mapping[str, Any], workspace: str) -> Approval | None:
    """``approval_of`` the standard-library reading; ``Unexpected`` when it is unsure."""
    return approval_of(plain_config(config), workspace)

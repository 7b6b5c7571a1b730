"""incoming-changes: files under git pathspecs that changed when a branch moved.

The source lives in ``source.py``; this package loads it on first use of a name, so
its light modules (``plain``, ``traits``, ``approval``) load without the observing code
(``validate`` asks each monitor's approval of them; docs/architecture.md, "Speed").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.sources.incoming_changes.source import *  # noqa: F403


def __getattr__(name: str) -> object:
    # The builtin, not importlib, which brings ``warnings`` to a short command.
    return getattr(
        __import__("agentmonitors.sources.incoming_changes.source", fromlist=["__name__"]), name
    )

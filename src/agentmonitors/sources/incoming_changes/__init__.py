"""incoming-changes: files under git pathspecs that changed when a branch moved.

The source lives in ``source.py``, loaded on first use of a name
(fastpath/lazy_package.py), so its light modules load without it.
"""

from __future__ import annotations

from agentmonitors.fastpath.lazy_package import load_on_first_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.sources.incoming_changes.source import *  # noqa: F403


__getattr__ = load_on_first_use(f"{__name__}.source")

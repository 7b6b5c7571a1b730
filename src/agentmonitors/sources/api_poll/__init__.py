"""api-poll: an HTTP endpoint's response, compared as text, JSON or status code.

The source lives in ``source.py``; this package loads it on first use of a name, so
its light modules (``plain``, ``traits``, ``approval``) load without the observing code
(``validate`` asks each monitor's approval of them; docs/architecture.md, "Speed").
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.sources.api_poll.source import *  # noqa: F403


def __getattr__(name: str) -> object:
    return getattr(importlib.import_module("agentmonitors.sources.api_poll.source"), name)

"""A source package that loads its observing code on first use of a name.

A source package's light modules (``plain``, ``traits``, ``approval``) are what
``validate`` and the hooks need; its observing code (``source.py``) brings asyncio,
subprocesses or HTTP. The package's ``__getattr__`` takes a name from ``source.py`` only
when something asks for it (docs/architecture.md, "Speed").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def load_on_first_use(module: str) -> Callable[[str], object]:
    """A module ``__getattr__`` that takes each name from ``module``, imported then."""

    def __getattr__(name: str) -> object:
        # The builtin, not importlib, which brings ``warnings`` to a short command.
        return getattr(__import__(module, fromlist=["__name__"]), name)

    return __getattr__

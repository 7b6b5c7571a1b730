"""Loggers that import ``logging`` only when something is logged.

``logging`` (with ``traceback``, ``threading`` and ``string``) costs a short command a few
milliseconds to import, and a tick that goes well logs nothing; modules on the paths of
those commands log through these (docs/architecture.md, "Speed").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from typing import Any


class _LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: logging.Logger | None = None

    def __getattr__(self, attribute: str) -> Any:
        logger = self._logger
        if logger is None:
            # Lazy: logging costs a short command milliseconds; this is its first message.
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attribute)


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)``, made at its first use."""
    lazy: Any = _LazyLogger(name)
    return lazy  # type: ignore[no-any-return]

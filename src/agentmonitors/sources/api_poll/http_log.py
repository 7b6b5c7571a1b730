"""The HTTP stack's log records, with the credentials of the requests in flight masked.

Apart from ``http_fetch.py`` so that loading the api-poll source (``validate``,
``doctor``) does not load :mod:`logging`; the first request installs the filter.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from agentmonitors.sources.redact import redact_text

# The HTTP stack's own loggers: httpx2 logs every request's full URL at INFO.
HTTP_LOGGERS: Final = (
    "httpx2",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
)


class _RedactingFilter(logging.Filter):
    """Rewrites the HTTP stack's log records with credentials masked."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        # Secrets of the requests in flight, counted (two monitors may share a token).
        self.active: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        with self.lock:
            secrets = list(self.active)
        message = record.getMessage()
        redacted = redact_text(message, secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True

    @contextmanager
    def masking(self, secrets: list[str]) -> Iterator[None]:
        with self.lock:
            self.active.update(secrets)
        try:
            yield
        finally:
            with self.lock:
                self.active.subtract(secrets)
                self.active += Counter()  # drop the zero counts


LOG_FILTER = _RedactingFilter()


def install_log_filter() -> None:
    """Put the masking filter on each of the HTTP stack's loggers (once)."""
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if LOG_FILTER not in logger.filters:
            logger.addFilter(LOG_FILTER)

"""``fastpath.lazy_logging`` is ``logging.getLogger``, made at its first use."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from agentmonitors.fastpath.lazy_logging import get_logger


def test_a_lazy_logger_writes_what_the_standard_logger_writes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lazy = get_logger("agentmonitors.tests.lazy")
    standard = logging.getLogger("agentmonitors.tests.standard")
    with caplog.at_level(logging.DEBUG):
        for logger in (lazy, standard):
            logger.debug("debug %s", 1)
            logger.warning("warning %s", 2)
            try:
                raise ValueError("boom")
            except ValueError:
                logger.exception("failed %s", 3)
    lazy_records = [r for r in caplog.records if r.name.endswith(".lazy")]
    standard_records = [r for r in caplog.records if r.name.endswith(".standard")]
    assert [(r.levelno, r.getMessage(), bool(r.exc_info)) for r in lazy_records] == [
        (r.levelno, r.getMessage(), bool(r.exc_info)) for r in standard_records
    ]
    assert len(lazy_records) == 3
    # The same named logger: its level and handlers are the standard one's.
    assert lazy.isEnabledFor(logging.DEBUG) == logging.getLogger(
        "agentmonitors.tests.lazy"
    ).isEnabledFor(logging.DEBUG)


def test_making_a_lazy_logger_does_not_import_logging() -> None:
    code = (
        "import sys; from agentmonitors.fastpath.lazy_logging import get_logger; "
        "log = get_logger('x'); print('logging' in sys.modules); "
        "log.info('now'); print('logging' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]

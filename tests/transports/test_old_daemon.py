"""A daemon left running across an upgrade, which predates ``delivery.reserveRendered``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentmonitors.daemon.protocol import UNSUPPORTED_REPLY
from agentmonitors.transports.deliver import _quiet
from agentmonitors.transports.deliver_session import deliver_to_session
from tests.daemon.fake_daemon import FakeDaemon, reply_with, short_socket_path


@pytest.fixture
def old_daemon() -> Iterator[tuple[str, list[str]]]:
    """A socket that knows ``session.list`` and answers anything newer the way an older
    daemon answers an unknown request."""
    methods: list[str] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        methods.append(request["method"])
        if request["method"] == "session.list":
            session = {"id": "S1", "hostSessionId": "host-1", "role": "lead"}
            return {"id": request["id"], "result": [session]}
        return dict(UNSUPPORTED_REPLY)

    with short_socket_path("amold-") as path:
        daemon = FakeDaemon(path, reply_with(answer))
        try:
            yield path, methods
        finally:
            daemon.close()


def test_hook_delivers_nothing_and_says_why_under_debug(
    old_daemon: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, methods = old_daemon
    lines: list[str] = []
    for debug in (_quiet, lines.append):
        delivered = deliver_to_session(
            path,
            "host-1",
            "turn-interruptible",
            event_name="UserPromptSubmit",
            workspace="/nowhere",
            output_format="json",
            debug=debug,
        )
        assert delivered is False
        assert capsys.readouterr().out == ""
    # No step-by-step fallback: it asked for a rendered reservation and nothing else.
    assert "hook.reserve" not in methods and "hook.preview" not in methods
    assert methods.count("delivery.reserveRendered") == 2
    assert any(
        line.startswith("stopped: the daemon predates delivery.reserveRendered") for line in lines
    )

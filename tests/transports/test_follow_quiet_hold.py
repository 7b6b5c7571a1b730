"""An idle follower asks the daemon once per heartbeat, not twice.

A hold that ends with nothing new is answered ``kept`` by the daemon, which has kept the
session active itself (``daemon/live_waits.py``); the reserve the follower used to make
after every hold would find nothing, so it is left out. A daemon that does not say
``kept`` (one from before it) still gets the reserve, which keeps its session active.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from agentmonitors.transports.follow import Follower
from tests.daemon.fake_daemon import FakeDaemon, reply_with, short_socket_path


@pytest.fixture
def socket_path() -> Iterator[str]:
    with short_socket_path("amquiet-") as path:
        yield path


def follow_against(socket_path: str, hold_reply: dict[str, Any]) -> list[str]:
    """Run a follower for a moment against a daemon whose every hold ends at once."""
    methods: list[str] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        methods.append(request["method"])
        if request["method"] == "delivery.wait":
            return {"id": request["id"], "result": {"version": 7, **hold_reply}}
        if request["method"] == "delivery.reserveRendered":
            session = {"status": "active", "workspacePath": None}
            return {"id": request["id"], "result": {"session": session, "reservation": None}}
        raise AssertionError(request["method"])

    daemon = FakeDaemon(socket_path, reply_with(answer))
    try:
        follower = Follower("S-quiet", socket_path, max_seconds=0.6, out=io.StringIO())
        assert follower.run() == 0
    finally:
        daemon.close()
    return methods


def test_a_quiet_hold_the_daemon_kept_is_not_followed_by_a_reserve(socket_path: str) -> None:
    methods = follow_against(socket_path, {"why": "hold", "kept": True})
    waits = methods.count("delivery.wait")
    assert waits >= 5, methods
    # The first look (the first wait returns at once, with no version yet) and the one
    # after the first answer, whose version was new to the follower: nothing after.
    assert methods.count("delivery.reserveRendered") <= 2, methods


@pytest.mark.parametrize("hold_reply", [{"why": "hold"}, {"why": "changed", "kept": True}])
def test_any_other_answer_is_followed_by_a_reserve(
    socket_path: str, hold_reply: dict[str, Any]
) -> None:
    methods = follow_against(socket_path, hold_reply)
    waits = methods.count("delivery.wait")
    assert waits >= 5, methods
    assert methods.count("delivery.reserveRendered") >= waits - 1, methods

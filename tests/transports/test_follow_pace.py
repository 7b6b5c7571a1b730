"""The follower's pace: never more lines than Claude Code accepts, nothing lost.

Claude Code drops a monitor's lines past a token bucket of 10, refilled one per 2 s. The
follower is driven here by a stand-in daemon that always has another delivery pending
and a clock the test moves, so a minute of a burst takes no time.
"""

from __future__ import annotations

import io
from typing import Any

from agentmonitors.transports.follow import MAX_PARTS, Follower
from agentmonitors.transports.follow_pace import HOST_BURST, HOST_REFILL_S, Pace, host_accepts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Burst:
    """A daemon with ``pending`` deliveries, one event each, reserved one at a time."""

    def __init__(self, pending: int) -> None:
        self.pending = list(range(pending))
        self.leased: dict[str, int] = {}
        self.committed: list[int] = []

    def __call__(self, method: str, params: dict[str, Any]) -> Any:
        if method == "delivery.reserveRendered":
            session = {"status": "active", "workspacePath": None}
            if not self.pending:
                return {"session": session, "reservation": None, "text": ""}
            event = self.pending.pop(0)
            reservation = f"r{event}"
            self.leased[reservation] = event
            claim = {"lifecycle": "turn-interruptible", "events": [{"eventId": f"e{event}"}]}
            return {
                "session": session,
                "reservation": {"reservationId": reservation, "claim": claim},
                "text": f"AgentMon: change e{event}.",
            }
        if method == "hook.commit":
            self.committed.append(self.leased.pop(params["reservationId"]))
            return {}
        if method == "hook.release":
            self.pending.insert(0, self.leased.pop(params["reservationId"]))
            return {}
        raise AssertionError(method)


def test_a_burst_of_100_deliveries_stays_within_the_host_limit_and_loses_nothing() -> None:
    clock = Clock()
    daemon = Burst(100)
    out = io.StringIO()
    follower = Follower("s1", "/tmp/sock", out=out, ipc=daemon, clock=clock, pace=Pace(clock=clock))
    times: list[float] = []
    for _ in range(600):  # one minute of 0.1 s polls
        before = out.getvalue().count("\n")
        assert follower.poll_once() is None
        if out.getvalue().count("\n") > before:
            times.append(clock.now)
        clock.now += 0.1
    lines = out.getvalue().splitlines()
    assert len(lines) == len(times)
    assert host_accepts(times), times
    assert len(lines) <= HOST_BURST + 60 / HOST_REFILL_S
    # Merged: each line carries several deliveries; none was lost or shown twice.
    assert all(line.count("AgentMon:") <= MAX_PARTS for line in lines)
    shown = [int(part.split(".")[0]) for line in lines for part in line.split("change e")[1:]]
    assert shown == daemon.committed == sorted(set(shown))
    assert not daemon.leased
    # What the minute could not write is still pending, for the next line or the hooks.
    assert sorted(daemon.committed + daemon.pending) == list(range(100))


def test_an_empty_bucket_reserves_nothing() -> None:
    clock = Clock()
    daemon = Burst(3)
    pace = Pace(burst=1, clock=clock)
    follower = Follower("s1", "/tmp/sock", out=io.StringIO(), ipc=daemon, clock=clock, pace=pace)
    assert follower.poll_once() is None
    assert daemon.committed == [0, 1, 2]
    daemon.pending = [3]
    assert follower.poll_once() is None
    assert daemon.pending == [3] and not daemon.leased  # left in the daemon
    clock.now += pace.wait_s()
    assert follower.poll_once() is None
    assert daemon.committed == [0, 1, 2, 3]

"""The sized reservation loop, driven against a scripted delivery service.

See docs/architecture.md, "The delivery protocol".

The script answers the four questions of :class:`~agentmonitors.delivery.sizing.Reserver`
and logs them under their IPC method names, so each test can change the world between
two questions (which the real service, answering in one instant, never shows).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from agentmonitors.delivery.render import render_hook
from agentmonitors.delivery.sizing import reserve_sized
from agentmonitors.delivery.text import (
    MAX_ADDITIONAL_CONTEXT,
    MAX_CHANNEL_CONTENT,
    REMINDER,
)

SOCK = "/tmp/am.sock"
LIST = "`agentmonitors events list --session S1 --socket '/tmp/am.sock' --unread`"
M1 = f"\n\n[truncated — more monitor updates are pending; run {LIST} to see the rest]"
M3_START = "\n\n[truncated — not everything fit in this recap"
C1 = "\n\n(more monitor updates are pending; they will surface on a later poll)"
HOOK_FOOTER = (
    f"\n\n{REMINDER} Run {LIST} to see them, then "
    "`agentmonitors events ack --session S1 --socket '/tmp/am.sock'` once handled."
    " To look closer without marking anything read:"
    " `agentmonitors summary|snapshot|diff MONITOR --session S1`;"
    " what is still held: `agentmonitors inspect --session S1`."
)


def uncounted(text: str) -> str:
    """``text`` with the markers' counts taken out (test_marker_counts.py checks them)."""
    text = re.sub(
        r"— \d+ more monitor updates? (?:is|are) pending",
        "— more monitor updates are pending",
        text,
    )
    text = re.sub(r" \(\d+ not shown\)", "", text)
    return re.sub(
        r"\(\d+ more monitor updates? (?:is|are) pending; (?:it|they) will surface on a later"
        r" poll, or run `[^`]*` to see (?:it|them) now\)",
        "(more monitor updates are pending; they will surface on a later poll)",
        text,
    )


def event(n: int, size: int = 10) -> dict[str, Any]:
    return {
        "eventId": f"E{n}",
        "monitorId": f"mon-{n}",
        "title": f"Title {n}",
        "summary": f"Summary {n}",
        "urgency": "high",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "body": "x" * size,
    }


class FakeDaemon:
    """The daemon's side of preview/reserve/release for one session, in memory.

    ``settled`` holds the settled-high rows (oldest first), which a recap also shows;
    ``normal`` the pending normal rows (a coalesced reminder is due while there are any
    and none is leased); ``low`` the pending low rows (a turn-idle reminder). Reserve
    leases the first ``maxEvents`` unleased settled rows, like the real decision. Hooks
    let a test change the world between calls, as another transport or a new event
    would.
    """

    def __init__(
        self,
        settled: list[dict[str, Any]] | None = None,
        *,
        normal: int = 0,
        low: int = 0,
        message: str = REMINDER,
    ) -> None:
        self.settled = list(settled or [])
        self.normal = normal
        self.low = low
        self.message = message
        self.leases: dict[str, tuple[list[str], bool]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.before_reserve: list[Callable[[FakeDaemon], None]] = []
        self.after_reserve: list[Callable[[FakeDaemon], None]] = []
        self.fail_preview_at: int | None = None
        self.transports: list[str] = []
        self._next = 0

    def leased_ids(self) -> set[str]:
        return {eid for ids, _normal in self.leases.values() for eid in ids}

    def normal_due(self) -> bool:
        return self.normal > 0 and not any(normal for _ids, normal in self.leases.values())

    def available(self) -> list[dict[str, Any]]:
        leased = self.leased_ids()
        return [e for e in self.settled if e["eventId"] not in leased]

    def methods(self) -> list[str]:
        return [method for method, _params in self.calls]

    def reserve_params(self) -> list[dict[str, Any]]:
        return [params for method, params in self.calls if method == "hook.reserve"]

    def __call__(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append((method, params))
        assert params.get("sessionId", "S1") == "S1"
        if method == "hook.preview":
            if self.fail_preview_at == self.methods().count("hook.preview"):
                raise ConnectionError("daemon hiccup")
            return [dict(e) for e in self.available()]
        if method == "hook.previewReminder":
            return {"reminder": REMINDER if self.normal_due() else None}
        if method == "hook.reserve":
            if self.before_reserve:
                self.before_reserve.pop(0)(self)
            result = self._reserve(params)
            if self.after_reserve:
                self.after_reserve.pop(0)(self)
            return result
        if method == "hook.release":
            assert params["reservationId"] in self.leases
            del self.leases[params["reservationId"]]
            return {"ok": True}
        raise AssertionError(f"unexpected method {method}")

    # The Reserver interface reserve_sized talks to; each answer goes through the log.

    def preview(self, session_id: str, limit: int | None = None) -> Any:
        return self("hook.preview", {"sessionId": session_id, "limit": limit})

    def preview_reminder(self, session_id: str) -> Any:
        return self("hook.previewReminder", {"sessionId": session_id})["reminder"]

    def reserve(
        self,
        session_id: str,
        lifecycle: str,
        max_events: int | None = None,
        *,
        transport: str = "hook",
    ) -> Any:
        self.transports.append(transport)
        params: dict[str, Any] = {"sessionId": session_id, "lifecycle": lifecycle}
        if max_events is not None:
            params["maxEvents"] = max_events
        return self("hook.reserve", params)

    def release(self, reservation_id: str) -> None:
        self("hook.release", {"reservationId": reservation_id})

    def _lease(self, ids: list[str], normal: bool, claim: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        rid = f"R{self._next}"
        self.leases[rid] = (ids, normal)
        return {"reservationId": rid, "claim": claim}

    def _reserve(self, params: dict[str, Any]) -> dict[str, Any] | None:
        lifecycle = params["lifecycle"]
        base = {"sessionId": "S1", "lifecycle": lifecycle, "mode": "delivery"}
        total = len(self.settled) + self.normal
        counts = {"low": 0, "normal": self.normal, "high": len(self.settled), "total": total}
        if lifecycle == "post-compact":
            if not self.settled:
                return None
            recap = {**base, "mode": "recap", "message": "Recap", "unreadCounts": counts}
            recap["events"] = [dict(e) for e in self.settled[-10:]]
            return self._lease([e["eventId"] for e in self.settled], True, recap)
        if lifecycle == "turn-idle":
            if not self.low:
                return None
            low = {**base, "urgency": "low", "message": self.message, "events": []}
            low["unreadCounts"] = counts
            return self._lease([], False, low)
        available = self.available()
        if available:
            limit = params.get("maxEvents")
            n = len(available) if limit is None else min(len(available), max(1, limit))
            events = [dict(e) for e in available[:n]]
            claim = {**base, "urgency": "high", "message": "...", "unreadCounts": counts}
            claim["events"] = events
            due = self.normal_due()
            if due:
                claim["coalescedReminder"] = REMINDER
                claim["coalescedNormalCount"] = self.normal
            return self._lease([e["eventId"] for e in events], due, claim)
        if self.normal_due():
            claim = {**base, "urgency": "normal", "message": self.message, "events": []}
            claim["unreadCounts"] = counts
            return self._lease([], True, claim)
        return None


def sized(daemon: FakeDaemon, lifecycle: str = "turn-interruptible", **kwargs: Any) -> Any:
    options: dict[str, Any] = {
        "transport": "hook",
        "socket_path": SOCK,
        "cap": MAX_ADDITIONAL_CONTEXT,
    }
    options.update(kwargs)
    return reserve_sized(daemon, "S1", lifecycle, **options)


def claimed_ids(reservation: dict[str, Any]) -> list[str]:
    return [e["eventId"] for e in reservation["claim"]["events"]]


def assert_claimed_equals_rendered(daemon: FakeDaemon, result: Any) -> None:
    reservation, _text, _more, shown = result
    assert list(daemon.leases) == [reservation["reservationId"]]  # everything else released
    assert claimed_ids(reservation) == shown


def test_everything_fits_in_one_reserve() -> None:
    daemon = FakeDaemon([event(1), event(2), event(3)])
    reservation, text, more, shown = result = sized(daemon)
    assert daemon.methods() == [
        "hook.preview",
        "hook.previewReminder",
        "hook.reserve",
        "hook.preview",
    ]
    assert daemon.reserve_params() == [
        {"sessionId": "S1", "lifecycle": "turn-interruptible", "maxEvents": 3}
    ]
    assert more is False
    assert shown == ["E1", "E2", "E3"]
    assert text == render_hook(reservation["claim"], SOCK, more_deferred=False)
    assert "[truncated" not in text
    assert_claimed_equals_rendered(daemon, result)


def test_too_many_events_reserve_fewer_and_render_m1() -> None:
    daemon = FakeDaemon([event(n, 1500) for n in range(1, 6)])
    _reservation, text, more, shown = result = sized(daemon)
    assert daemon.reserve_params()[0]["maxEvents"] == 2
    assert daemon.methods().count("hook.reserve") == 1
    assert daemon.methods().count("hook.preview") == 1  # already deferring: no re-preview
    assert more is True
    assert shown == ["E1", "E2"]
    assert uncounted(text).endswith(M1)
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert_claimed_equals_rendered(daemon, result)


def test_coalesced_footer_is_reserved_when_sizing() -> None:
    # Two events that fill the cap exactly on their own leave no room for the footer.
    sizes = [10, 10]
    whole = render_hook(
        {"sessionId": "S1", "lifecycle": "turn-interruptible", "events": [event(1), event(2)]},
        SOCK,
        more_deferred=False,
    )
    sizes[1] += MAX_ADDITIONAL_CONTEXT - len(whole)
    alone = FakeDaemon([event(1, sizes[0]), event(2, sizes[1])])
    assert sized(alone)[3] == ["E1", "E2"]
    daemon = FakeDaemon([event(1, sizes[0]), event(2, sizes[1])], normal=2)
    reservation, text, more, shown = result = sized(daemon)
    assert daemon.reserve_params()[0]["maxEvents"] == 1
    assert more is True
    assert shown == ["E1"]
    assert reservation["claim"]["coalescedNormalCount"] == 2
    assert uncounted(text).endswith(M1 + HOOK_FOOTER)
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert_claimed_equals_rendered(daemon, result)


def test_substituted_reservation_that_does_not_fit_is_released_and_retried() -> None:
    daemon = FakeDaemon([event(n) for n in range(1, 5)])

    def swap_in_big_events(d: FakeDaemon) -> None:
        # Another transport claimed the previewed rows; bigger ones settled meanwhile.
        d.settled = [event(n, 1500) for n in range(11, 15)]

    daemon.before_reserve.append(swap_in_big_events)
    _reservation, text, more, shown = result = sized(daemon)
    first, second = daemon.reserve_params()
    assert first["maxEvents"] == 4
    assert second["maxEvents"] == 2
    assert daemon.methods().count("hook.release") == 1
    assert next(p for m, p in daemon.calls if m == "hook.release") == {"reservationId": "R1"}
    assert shown == ["E11", "E12"]
    assert more is True
    assert uncounted(text).endswith(M1)
    assert_claimed_equals_rendered(daemon, result)


def test_last_attempt_forces_a_single_event() -> None:
    daemon = FakeDaemon([event(n) for n in range(1, 5)])

    def swap(size: int, first: int) -> Callable[[FakeDaemon], None]:
        def apply(d: FakeDaemon) -> None:
            d.settled = [event(n, size) for n in range(first, first + 4)]

        return apply

    daemon.before_reserve += [swap(1500, 11), swap(3000, 21)]
    _reservation, text, more, shown = result = sized(daemon)
    assert [p["maxEvents"] for p in daemon.reserve_params()] == [4, 2, 1]
    assert daemon.methods().count("hook.release") == 2
    assert shown == ["E21"]
    assert more is True
    assert uncounted(text).endswith(M1)
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert_claimed_equals_rendered(daemon, result)


def test_single_oversized_event_renders_cut_with_m2_and_m1() -> None:
    daemon = FakeDaemon([event(1)])

    def swap(d: FakeDaemon) -> None:
        d.settled = [event(n, 9000) for n in range(2, 4)]

    daemon.before_reserve += [swap]
    _reservation, text, more, shown = result = sized(daemon)
    assert [p["maxEvents"] for p in daemon.reserve_params()] == [1]
    assert "hook.release" not in daemon.methods()
    assert shown == ["E2"]
    assert more is True
    assert "this update was too large to show in full" in text
    assert uncounted(text).endswith(M1)
    assert len(text) == MAX_ADDITIONAL_CONTEXT
    assert_claimed_equals_rendered(daemon, result)


def test_event_settling_after_the_reservation_sets_more_deferred() -> None:
    daemon = FakeDaemon([event(1), event(2)])
    daemon.after_reserve.append(lambda d: d.settled.append(event(3)))
    _reservation, text, more, shown = result = sized(daemon)
    assert more is True
    assert shown == ["E1", "E2"]
    assert uncounted(text).endswith(M1)
    assert_claimed_equals_rendered(daemon, result)


def test_late_event_that_leaves_no_room_for_m1_releases_and_retries() -> None:
    first = event(1, 10)
    whole = render_hook(
        {"sessionId": "S1", "lifecycle": "turn-interruptible", "events": [first, event(2)]},
        SOCK,
        more_deferred=False,
    )
    second = event(2, 10 + MAX_ADDITIONAL_CONTEXT - len(whole))  # exactly fills the cap
    daemon = FakeDaemon([first, second])
    daemon.after_reserve.append(lambda d: d.settled.append(event(3)))
    _reservation, text, more, shown = result = sized(daemon)
    assert [p["maxEvents"] for p in daemon.reserve_params()] == [2, 1]
    assert daemon.methods().count("hook.release") == 1
    assert more is True
    assert shown == ["E1"]
    assert uncounted(text).endswith(M1)
    assert_claimed_equals_rendered(daemon, result)


def test_failing_re_preview_releases_then_propagates() -> None:
    daemon = FakeDaemon([event(1)])
    daemon.fail_preview_at = 2
    with pytest.raises(ConnectionError):
        sized(daemon)
    assert daemon.methods()[-1] == "hook.release"
    assert daemon.leases == {}


def test_reserve_error_propagates() -> None:
    daemon = FakeDaemon([event(1)])

    def broken(_daemon: FakeDaemon) -> None:
        raise OSError("gone")

    daemon.before_reserve.append(broken)
    with pytest.raises(OSError, match="gone"):
        sized(daemon)
    assert daemon.leases == {}


@pytest.mark.parametrize("packer", ["hook", "channel"])
def test_reservations_are_taken_for_the_packers_transport(packer: str) -> None:
    """A channel reservation must say so: the service keeps hook and channel leases apart."""
    daemon = FakeDaemon([event(1)])
    cap = MAX_ADDITIONAL_CONTEXT if packer == "hook" else MAX_CHANNEL_CONTENT
    assert sized(daemon, transport=packer, cap=cap)[3] == ["E1"]
    assert daemon.transports == [packer]


def test_reminder_claim_is_accepted() -> None:
    daemon = FakeDaemon(normal=3)
    reservation, text, more, shown = sized(daemon)
    assert daemon.reserve_params() == [{"sessionId": "S1", "lifecycle": "turn-interruptible"}]
    assert reservation["claim"]["events"] == []
    assert more is False
    assert shown == []
    assert text.startswith(f"AgentMon: {REMINDER} Run {LIST}")


def test_reminder_after_the_previewed_events_were_taken_clears_more_deferred() -> None:
    daemon = FakeDaemon([event(n, 1500) for n in range(1, 6)], normal=1)

    def taken_elsewhere(d: FakeDaemon) -> None:
        d.settled = []

    daemon.before_reserve.append(taken_elsewhere)
    reservation, text, more, shown = sized(daemon)
    assert reservation["claim"]["events"] == []
    assert more is False
    assert shown == []
    assert "[truncated" not in text


def test_blank_reminder_is_released_and_nothing_is_delivered() -> None:
    daemon = FakeDaemon(normal=1, message="  ")
    assert sized(daemon) == (None, "", False, [])
    assert daemon.methods()[-1] == "hook.release"
    assert daemon.leases == {}


def test_nothing_pending_reserves_nothing() -> None:
    daemon = FakeDaemon()
    assert sized(daemon) == (None, "", False, [])
    assert daemon.reserve_params() == [{"sessionId": "S1", "lifecycle": "turn-interruptible"}]


@pytest.mark.parametrize("lifecycle", ["post-compact", "turn-idle"])
def test_other_lifecycles_reserve_unsized(lifecycle: str) -> None:
    daemon = FakeDaemon([event(n, 1500) for n in range(1, 6)], low=2)
    result = sized(daemon, lifecycle)
    assert daemon.methods() == ["hook.reserve"]
    assert daemon.reserve_params() == [{"sessionId": "S1", "lifecycle": lifecycle}]
    if lifecycle == "post-compact":
        reservation, text, more, shown = result
        assert more is False
        assert len(reservation["claim"]["events"]) == 5
        assert shown == ["E1", "E2"]  # a recap claims everything but shows what fits
        assert M3_START in text
        assert M1 not in text
    else:
        reservation, text, more, shown = result
        assert reservation["claim"]["urgency"] == "low"
        assert text.startswith(f"AgentMon: {REMINDER} Run {LIST}")
        assert more is False
        assert shown == []


def test_channel_packer_sizes_against_the_channel_cap() -> None:
    daemon = FakeDaemon([event(n, 6000) for n in range(1, 6)])
    _reservation, text, more, shown = result = sized(
        daemon, transport="channel", cap=MAX_CHANNEL_CONTENT
    )
    assert daemon.reserve_params()[0]["maxEvents"] == 3
    assert more is True
    assert shown == ["E1", "E2", "E3"]
    assert text.startswith("### mon-1 (high)")
    assert uncounted(text).endswith(C1)
    assert len(text) <= MAX_CHANNEL_CONTENT
    assert_claimed_equals_rendered(daemon, result)


def test_unknown_packer_is_rejected() -> None:
    with pytest.raises(ValueError, match="transport"):
        sized(FakeDaemon(), transport="smoke-signal")


@pytest.mark.parametrize("packer", ["hook", "channel"])
def test_claimed_set_equals_rendered_set_across_random_batches(packer: str) -> None:
    rng = random.Random(1234)
    cap = MAX_ADDITIONAL_CONTEXT if packer == "hook" else MAX_CHANNEL_CONTENT
    for _round in range(150):
        count = rng.randint(1, 12)
        events = [event(n, rng.choice([5, 200, 900, 1800, 4500, 12000])) for n in range(count)]
        daemon = FakeDaemon(events, normal=rng.choice([0, 0, 2]))
        if rng.random() < 0.3:
            daemon.before_reserve.append(
                lambda d: d.settled.reverse()  # another transport reorders what is available
            )
        if rng.random() < 0.3:
            daemon.after_reserve.append(lambda d: d.settled.append(event(99, 50)))
        reservation, text, more, shown = result = sized(daemon, transport=packer, cap=cap)
        assert reservation is not None
        assert len(text) <= cap
        assert_claimed_equals_rendered(daemon, result)
        deferred = {e["eventId"] for e in daemon.available()}
        assert more == bool(deferred), (count, shown, deferred)
        if packer == "hook":
            match = re.search(r"--event-ids (\S+)", text)
            assert match is not None
            assert match.group(1).split(",") == shown

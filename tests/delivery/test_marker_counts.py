"""A cut delivery's marker counts what it left out, and its digits stay inside the cap.

The marker's length depends on the count, which depends on how many blocks are shown:
sizing is a fixed point over both (``delivery/render.py``). Every body length is tried
around counts that cross 9→10 and 99→100, so one of them sits exactly on the boundary.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentmonitors.delivery.render import render_channel_shown, render_hook_shown

SOCK = "/tmp/am.sock"
COUNT = re.compile(r"(\d+) more monitor updates? (?:is|are) pending")
RECAP = re.compile(r"not everything fit in this recap \((\d+) not shown\)")


def claim(events: int, total: int, size: int, lifecycle: str) -> dict[str, Any]:
    return {
        "sessionId": "S1",
        "mode": "recap" if lifecycle == "post-compact" else "delivery",
        "lifecycle": lifecycle,
        "message": "",
        "unreadCounts": {"low": 0, "normal": 0, "high": total, "total": total},
        "events": [
            {
                "eventId": f"E{n:03}",
                "monitorId": "mon",
                "title": f"Title {n}",
                "summary": "",
                "objectDetail": "",
                "urgency": "high",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "body": "b" * size,
            }
            for n in range(events)
        ],
    }


@pytest.mark.parametrize("lifecycle", ["turn-interruptible", "post-compact"])
def test_the_hook_marker_counts_what_it_left_out_within_the_cap(lifecycle: str) -> None:
    cap = 1000
    boundary: set[int] = set()
    for size in range(60, 200, 3):
        for total in (*range(10, 20), *range(100, 110)):
            text, shown = render_hook_shown(
                claim(10, total, size, lifecycle), SOCK, more_deferred=total > 10, cap=cap
            )
            assert len(text) <= cap, (size, total, len(text))
            found = (RECAP if lifecycle == "post-compact" else COUNT).search(text)
            if len(shown) == 10 and total == 10:
                assert found is None
                continue
            assert found is not None, text
            counted = int(found.group(1))
            assert counted == total - len(shown), (size, total, counted, len(shown))
            if counted in (9, 10, 99, 100):
                boundary.add(counted)
    # Some deliveries sat on each side of a digit boundary (10 → 9, 100 → 99).
    assert boundary == {9, 10, 99, 100}


@pytest.mark.parametrize("total", [10, 11, 100, 101])
def test_the_channel_marker_counts_what_it_left_out_within_the_cap(total: int) -> None:
    cap = 1500
    for size in range(60, 260):
        content, _meta, shown = render_channel_shown(
            claim(10, total, size, "turn-interruptible"), SOCK, more_deferred=total > 10, cap=cap
        )
        assert len(content) <= cap, (size, len(content))
        if total == 10 and len(shown) == 10:
            continue
        found = COUNT.search(content)
        assert found is not None, content
        assert int(found.group(1)) == total - len(shown)
        assert f"`agentmonitors events list --session S1 --socket '{SOCK}' --unread`" in content


def test_a_marker_without_a_known_count_reads_as_before() -> None:
    bare = claim(10, 10, 300, "turn-interruptible")
    del bare["unreadCounts"]
    text, shown = render_hook_shown(bare, SOCK, more_deferred=False, cap=1000)
    assert len(shown) < 10
    assert "[truncated — more monitor updates are pending; run" in text

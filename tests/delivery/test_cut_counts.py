"""An update too large to show in full says how many of its characters it left out.

The hook's M2, the channel's C2 and a recap's M3 count the characters they cut from the
update they show. The marker's length depends on that count, which depends on how much
is kept beside the marker: the cut is a fixed point over the count's digits
(``delivery/text.py``, ``counted_cut``). A cut leaves out at least its marker's length
(about 200), so body lengths are tried around counts that cross 999→1,000,
9,999→10,000 and 99,999→100,000, and some sit on each side of each boundary; the
fixed point itself is walked across 9→10 and 99→100 with a short marker.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentmonitors.delivery.render import render_channel_shown, render_hook_shown

SOCK = "/tmp/am.sock"
LIST = f"`agentmonitors events list --session S1 --socket '{SOCK}' --unread`"
CHAR = "·"  # in no line of ours, so counting it counts the body shown
M2 = re.compile(r": ([\d,]+) more characters? of this update (?:was|were) left out;")
M3 = re.compile(r"\((?:(\d+) not shown, and )?([\d,]+) more characters? of the update it shows\)")
BOUNDARIES = (1000, 10000, 100000)


def crossed(seen: set[int]) -> bool:
    """Counts were seen on both sides of every boundary: the boundary's own, and one of
    fewer digits (a count a digit shorter keeps that much more, so it skips a value or
    two: 1,000 is followed by 997)."""
    return all(b in seen and any(b - 10 < c < b for c in seen) for b in BOUNDARIES)


def claim(size: int, *, total: int = 1, lifecycle: str = "turn-interruptible") -> dict[str, Any]:
    return {
        "sessionId": "S1",
        "mode": "recap" if lifecycle == "post-compact" else "delivery",
        "lifecycle": lifecycle,
        "message": "",
        "unreadCounts": {"low": 0, "normal": 0, "high": total, "total": total},
        "events": [
            {
                "eventId": "E1",
                "monitorId": "mon",
                "title": "Title",
                "summary": "",
                "objectDetail": "",
                "urgency": "high",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "body": CHAR * size,
            }
        ],
    }


def number(text: str) -> int:
    return int(text.replace(",", ""))


def sizes_around(boundary: int, shown: int, spread: int = 12) -> range:
    """Body lengths whose cut leaves about ``boundary`` characters out, when about
    ``shown`` characters of a body are shown."""
    return range(boundary + shown - spread, boundary + shown + spread)


def shown_of(text: str) -> int:
    return text.count(CHAR)


@pytest.mark.parametrize("others", [False, True])
def test_the_hook_counts_the_characters_it_cut_across_digit_boundaries(others: bool) -> None:
    cap = 2000
    seen: set[int] = set()
    total = 3 if others else 1
    room = shown_of(
        render_hook_shown(claim(500000, total=total), SOCK, more_deferred=others, cap=cap)[0]
    )
    for boundary in BOUNDARIES:
        for size in sizes_around(boundary, room):
            text, shown = render_hook_shown(
                claim(size, total=total), SOCK, more_deferred=others, cap=cap
            )
            # Within the cap, and filling it: no room is lost to a longer count.
            assert len(text) == cap, (size, len(text))
            assert shown == ["E1"]
            found = M2.search(text)
            assert found is not None, text
            counted = number(found.group(1))
            assert counted == size - text.count(CHAR), (size, counted)
            # The count is written as a reader counts: grouped digits.
            assert found.group(1) == f"{counted:,}"
            assert f"the full copy stays unread — run {LIST} to see it now]" in text
            assert ("2 more monitor updates are pending" in text) is others
            seen.add(counted)
    assert crossed(seen), sorted(seen)


def test_the_channel_counts_the_characters_it_cut_across_digit_boundaries() -> None:
    cap = 2000
    seen: set[int] = set()
    room = shown_of(render_channel_shown(claim(500000), SOCK, more_deferred=False, cap=cap)[0])
    for boundary in BOUNDARIES:
        for size in sizes_around(boundary, room):
            content, _meta, shown = render_channel_shown(
                claim(size), SOCK, more_deferred=False, cap=cap
            )
            assert len(content) == cap, (size, len(content))
            assert shown == ["E1"]
            found = re.search(
                r"\(this update was too large to show in full: ([\d,]+) more characters? of this"
                rf" update (?:was|were) left out; run {re.escape(LIST)} to see the full copy\)$",
                content,
            )
            assert found is not None, content[-300:]
            counted = number(found.group(1))
            assert counted == size - content.count(CHAR)
            seen.add(counted)
    assert crossed(seen), sorted(seen)


def test_a_recap_counts_the_characters_it_cut_and_the_updates_it_did_not_show() -> None:
    cap = 2000
    seen: set[int] = set()
    for total in (1, 12):
        recap = claim(500000, total=total, lifecycle="post-compact")
        room = shown_of(render_hook_shown(recap, SOCK, more_deferred=False, cap=cap)[0])
        for boundary in BOUNDARIES:
            for size in sizes_around(boundary, room):
                text, shown = render_hook_shown(
                    claim(size, total=total, lifecycle="post-compact"),
                    SOCK,
                    more_deferred=False,
                    cap=cap,
                )
                assert len(text) == cap
                assert shown == ["E1"]
                assert text.count("[truncated") == 1
                found = M3.search(text)
                assert found is not None, text[-400:]
                # One update, shown: nothing is "not shown"; else the rest are.
                assert found.group(1) == (None if total == 1 else str(total - 1))
                counted = number(found.group(2))
                assert counted == size - text.count(CHAR)
                seen.add(counted)
    assert crossed(seen), sorted(seen)


def test_a_counted_cut_fills_the_cap_exactly() -> None:
    """Where the count stops shrinking, the text and its marker fill the cap: no room is
    lost to the longer count the cut was first sized for."""
    from agentmonitors.delivery.text import counted_cut

    def marker(left: int) -> str:
        return f"[{left:,} more]"

    seen: set[int] = set()
    for length in range(1, 1200):
        for cap in (12, 15, 20, 40):
            if length + len(marker(0)) <= cap:
                continue
            kept, closing = counted_cut(length, cap, marker)
            assert closing == marker(length - kept)
            assert kept + len(closing) == cap, (length, cap, kept, closing)
            seen.add(length - kept)
    assert all(b in seen and any(b - 10 < c < b for c in seen) for b in (10, 100, 1000))

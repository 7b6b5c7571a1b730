"""The per-process cache of decoded event rows stays small under a long run's churn.

A daemon that stores an event a second decodes each one for delivery; the cache keeps
the unread ones (read again at every hook) and lets the acknowledged ones go, so its
memory levels off after a few thousand events instead of after an hour of them.
"""

from __future__ import annotations

import json
import sqlite3
import tracemalloc

from agentmonitors.store import records
from agentmonitors.store.records import EventRow


def event_rows(count: int, output_lines: int = 40) -> list[sqlite3.Row]:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute(
        "CREATE TABLE e (id, workspace_path, monitor_id, source_name, urgency, title, body,"
        " summary, payload, snapshot_metadata, snapshot_text, diff_text, object_key,"
        " baseline_strategy, query_scope, tags, created_at)"
    )
    for index in range(count):
        path = f"/work/project/area{index % 12:02d}/docs/page{index % 5}.md"
        conn.execute(
            "INSERT INTO e VALUES (?, '/work/project', 'files', 'file-fingerprint', 'normal',"
            " ?, '', ?, ?, ?, ?, ?, ?, 'incremental', ?, '[]', ?)",
            (
                f"event-{index:06d}",
                f"File changed: {path}",
                f"File changed: {path}",
                json.dumps({"filePath": path, "change": "modified", "size": index}),
                json.dumps({"filePath": path, "bytes": 40}),
                f"edit {index}\n" * output_lines,
                f"-edit {index - 1}\n+edit {index}\n" * 20,
                path,
                json.dumps({"filePath": path}),
                index,
            ),
        )
    return list(conn.execute("SELECT * FROM e"))


def bytes_kept_decoding(rows: list[sqlite3.Row]) -> int:
    """Traced bytes still held after decoding ``rows`` through the cache (left filled)."""
    records._EVENT_CACHE.clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for row in rows:
            EventRow.from_row_cached(row)
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_an_hour_of_events_does_not_stay_in_memory() -> None:
    rows = event_rows(4_000)  # an hour of the soak's events
    try:
        kept = bytes_kept_decoding(rows)
    finally:
        records._EVENT_CACHE.clear()
    # These events hold about 1.6 KiB each decoded: an hour of them is over 6 MiB.
    assert kept < 4 * 1024 * 1024, f"{kept / 2**20:.1f} MiB kept"


def test_unread_events_read_at_every_hook_stay_cached() -> None:
    rows = event_rows(3_000)
    records._EVENT_CACHE.clear()
    try:
        unread = rows[:1_000]
        for start in range(1_000, 3_000, 100):
            for row in unread:  # a hook reads every unread row again
                EventRow.from_row_cached(row)
            for row in rows[start : start + 100]:  # new events, acknowledged at once
                EventRow.from_row_cached(row)
        assert all(EventRow.cached(row["id"]) is not None for row in unread)
    finally:
        records._EVENT_CACHE.clear()


def test_large_events_are_bounded_by_their_text_not_only_their_count() -> None:
    # A command monitor whose whole output (here about 100 KiB) changes every run:
    # bounded by count alone, these 200 would all stay (about 20 MiB), 2,048 of them
    # about 200 MiB.
    rows = event_rows(200, output_lines=10_000)
    try:
        kept = bytes_kept_decoding(rows)
        assert records._EVENT_CACHE.chars <= records._EVENT_CACHE.max_chars
        assert EventRow.cached(rows[-1]["id"]) is not None  # the newest stays
        assert EventRow.cached(rows[0]["id"]) is None
    finally:
        records._EVENT_CACHE.clear()
    assert kept < 8 * 1024 * 1024, f"{kept / 2**20:.1f} MiB kept"


def test_an_event_larger_than_the_whole_budget_is_decoded_but_not_kept() -> None:
    small = event_rows(11)[1:]  # ids apart from the huge one's
    huge = event_rows(1, output_lines=600_000)[0]  # about 6 MiB of output
    records._EVENT_CACHE.clear()
    try:
        for row in small:
            EventRow.from_row_cached(row)
        event = EventRow.from_row_cached(huge)
        assert event.snapshot_text is not None and len(event.snapshot_text) > 4 * 2**20
        assert EventRow.cached(huge["id"]) is None
        assert all(EventRow.cached(row["id"]) is not None for row in small)
    finally:
        records._EVENT_CACHE.clear()

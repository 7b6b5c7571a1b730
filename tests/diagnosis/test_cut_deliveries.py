"""What a hook delivers, cut to its cap, says how much it left out; and it moves a
session's diff base only for what it printed.

A real database holds the events (written through ``materialize``, as the daemon writes
them), a real daemon serves it, the real ``hook deliver`` delivers, and the real CLI is
run as an agent would run it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT
from agentmonitors.sources.observation import Observation
from agentmonitors.store.database import Database
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.diagnosis.test_cut_listings import (
    as_json,
    cli,
    served,
    store_batch,
    suggested,
    write_store,
)

pytestmark = pytest.mark.slow

__all__ = ["served"]  # the fixture, shared with the listings' tests

HOST = "host-cuts"  # the host session id ``write_store`` registers


def add_events(
    db_path: str, workspace: str, monitor_id: str, urgency: str, observations: Iterable[Observation]
) -> None:
    """More events of ``monitor_id``, after those ``write_store`` wrote."""
    clock = ManualClock(START_MS - 1_800_000)
    db = Database(db_path)
    with db.write() as conn:
        store_batch(conn, clock, workspace, (monitor_id, urgency, observations))
    db.close()


def deliver(daemon: ClockedDaemon, *extra: str) -> str:
    """The context the real ``hook deliver`` hands the agent on a prompt.

    The session was registered in the store, not by ``session start``: no hook-state
    file names its socket, so the hook is given it.
    """
    root = daemon.root
    payload = {"session_id": HOST, "hook_event_name": "UserPromptSubmit", "cwd": str(root)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentmonitors",
            "hook",
            "deliver",
            "--socket",
            daemon.socket,
            *extra,
        ],
        input=json.dumps({**payload, "prompt": "go on"}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
    )
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def version(key: str, number: int) -> str:
    """A document long enough that ten of its changes never fit one hook delivery."""
    return "".join(f"{key} line {line:02} of version {number}\n" for line in range(40))


def test_a_recap_cut_to_the_cap_moves_the_diff_base_only_for_the_events_it_printed(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    keys = [f"doc{n:02}" for n in range(12)]
    first = [
        Observation(title=f"{key} v1", object_key=key, snapshot_text=version(key, 1))
        for key in keys
    ]
    session = write_store(daemon.db, str(root), [("docs", "normal", first)])
    # The session acknowledges the first versions (with no daemon: the store takes it).
    acked = cli("events", "ack", "--session", session, "--format", "text")
    assert acked.code == 0, acked.err
    second = [
        Observation(title=f"{key} v2", object_key=key, snapshot_text=version(key, 2))
        for key in keys
    ]
    add_events(daemon.db, str(root), "docs", "normal", second)
    daemon.start()

    context = deliver(daemon, "--lifecycle", "post-compact")
    assert len(context) <= MAX_ADDITIONAL_CONTEXT
    printed = [key for key in keys if f"\n{key} v2\n" in context]
    # The recap holds the ten newest; the cap lets only some of them print.
    assert printed and printed == keys[2 : 2 + len(printed)] and len(printed) < 10, printed
    left = len(keys) - len(printed)
    assert f"[truncated — not everything fit in this recap ({left} not shown);" in context

    def base(key: str) -> dict[str, Any]:
        result: dict[str, Any] = as_json("diff", "docs", "--object", key, "--session", session)
        return result

    # What it printed is what the session saw: no difference since.
    assert base(printed[0])["changed"] is False
    # An event the recap meant to show but cut away still diffs from what was acknowledged.
    for key in ("doc11", "doc00"):
        result = base(key)
        assert result["changed"] is True, result
        assert f"+ 1: {key} line 00 of version 2" in result["diff"], result

    # The listing the marker names shows every one of them.
    listing = cli(*suggested(context.splitlines()[-1]), "--format", "json")
    assert listing.code == 0, listing.err
    titles = {record["title"] for record in json.loads(listing.out)}
    assert {f"{key} v2" for key in keys} <= titles


def test_a_delivery_cut_to_the_cap_counts_the_updates_it_left_for_later(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    body = "A line of the alert body that keeps going on.\n" * 12
    alerts = [Observation(title=f"Alert {n}", object_key=f"a{n}", body=body) for n in range(1, 121)]
    session = write_store(daemon.db, str(root), [("alerts", "high", alerts)])
    daemon.start()

    context = deliver(daemon)
    assert len(context) <= MAX_ADDITIONAL_CONTEXT
    shown = len(re.findall(r"^### alerts \(high\)$", context, re.M))
    assert 1 <= shown < 120
    closing = context.splitlines()[-1]
    # Three digits: more than a hundred wait.
    assert closing.startswith(f"[truncated — {120 - shown} more monitor updates are pending; run")
    # The listing it names shows them, and those shown too (claimed, not acknowledged).
    listing = cli(*suggested(closing), "--format", "json", "--all")
    assert listing.code == 0, listing.err
    states = [record["deliveryState"] for record in json.loads(listing.out)]
    assert (states.count("unread"), states.count("claimed")) == (120 - shown, shown)
    assert cli("events", "ack", "--session", session).code == 0

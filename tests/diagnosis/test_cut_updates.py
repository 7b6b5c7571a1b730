"""One update too large to show in full says how many of its characters it left out,
and the listing it names shows them.

A real database holds the event (written through ``materialize``, as the daemon writes
it), a real daemon serves it, and the real ``hook deliver`` (Claude Code's
UserPromptSubmit payload on stdin) and the real ``channel serve`` (the official MCP
client over stdio) deliver it. The count is checked against the body the listing shows.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification

from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT, MAX_CHANNEL_CONTENT
from agentmonitors.sources.observation import Observation
from tests.daemon.clocked import ClockedDaemon
from tests.diagnosis.test_cut_deliveries import HOST, deliver
from tests.diagnosis.test_cut_listings import Batch, cli, served, suggested, write_store

pytestmark = pytest.mark.slow

__all__ = ["served"]  # the fixture, shared with the listings' tests

COUNT = r"([\d,]+) more characters of this update were left out"


def alert_body(lines: int) -> str:
    return "".join(
        f"Line {n:05} of an alert that explains itself at length.\n" for n in range(lines)
    )


def alert(body: str) -> Batch:
    """One high alert whose summary is its own (a summary that defaults to the body
    would repeat it on the detail line)."""
    return ("alerts", "high", [Observation(title="Alert", summary="An alert.", body=body)])


def listed_body(closing: str) -> str:
    """The body of the one update, as the listing ``closing`` names shows it."""
    listing = cli(*suggested(closing), "--format", "json")
    assert listing.code == 0, listing.err
    (record,) = json.loads(listing.out)
    return str(record["body"])


def shown_of(text: str, body: str, marker_start: int) -> str:
    """The part of ``body`` that ``text`` shows before its marker."""
    start = text.index(body[:40])
    return text[start:marker_start]


def test_a_hook_delivery_cut_to_the_cap_counts_the_characters_it_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    body = alert_body(200)
    assert len(body) > 2 * MAX_ADDITIONAL_CONTEXT
    write_store(daemon.db, str(root), [alert(body)])
    daemon.start()

    context = deliver(daemon)
    assert len(context) <= MAX_ADDITIONAL_CONTEXT
    closing = context.splitlines()[-1]
    found = re.fullmatch(
        r"\[truncated — this update was too large to show in full: "
        + COUNT
        + r"; the full copy stays unread — run `[^`]+` to see it now\]",
        closing,
    )
    assert found is not None, closing
    counted = int(found.group(1).replace(",", ""))
    assert found.group(1) == f"{counted:,}" and counted > 1000

    # The listing it names shows the update whole; the count is what the delivery lacks.
    whole = listed_body(closing)
    assert whole == body
    shown = shown_of(context, whole, context.index("\n\n[truncated"))
    assert whole.startswith(shown) and shown
    assert counted == len(whole) - len(shown)


async def channel_push(root: Path) -> dict[str, Any]:
    """The first push ``channel serve`` sends for the host session."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root), "CLAUDE_CODE_SESSION_ID": HOST}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmonitors", "channel", "serve", "--poll-ms", "100"],
        env=env,
        cwd=str(root),
    )
    with (root.parent / "channel.err").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            forward, tapped = anyio.create_memory_object_stream[SessionMessage | Exception](100)
            pushes: list[dict[str, Any]] = []

            async def tap() -> None:
                # The SDK's client drops notifications it does not know; catch ours first.
                async with forward:
                    async for message in read:
                        root_message = (
                            message.message.root if isinstance(message, SessionMessage) else None
                        )
                        if (
                            isinstance(root_message, JSONRPCNotification)
                            and root_message.method == "notifications/claude/channel"
                        ):
                            pushes.append(dict(root_message.params or {}))
                            continue
                        await forward.send(message)

            async with forward, tapped, anyio.create_task_group() as tasks:
                tasks.start_soon(tap)
                async with ClientSession(tapped, write) as session:
                    await session.initialize()
                    with anyio.fail_after(30):
                        while not pushes:
                            await anyio.sleep(0.05)
                tasks.cancel_scope.cancel()
            return pushes[0]


def test_a_channel_push_cut_to_the_cap_counts_the_characters_it_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    body = alert_body(500)
    assert len(body) > MAX_CHANNEL_CONTENT + 1000
    write_store(daemon.db, str(root), [alert(body)])
    daemon.start()

    push = anyio.run(channel_push, root)
    content = str(push["content"])
    assert len(content) <= MAX_CHANNEL_CONTENT
    closing = content.splitlines()[-1]
    found = re.fullmatch(
        r"\(this update was too large to show in full: "
        + COUNT
        + r"; run `[^`]+` to see the full copy\)",
        closing,
    )
    assert found is not None, closing
    counted = int(found.group(1).replace(",", ""))
    assert found.group(1) == f"{counted:,}"

    whole = listed_body(closing)
    assert whole == body
    shown = shown_of(content, whole, content.index("\n\n(this update was too large"))
    assert whole.startswith(shown) and shown
    assert counted == len(whole) - len(shown)

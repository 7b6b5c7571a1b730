"""``events list`` in TOON against a daemon that predates rendering it.

A current daemon renders the TOON listing itself (tests/test_imports.py proves the
command then loads no encoder and prints exactly what the public encoder makes); a
daemon left running across an upgrade ignores ``render`` and answers the records, which
the command then encodes itself, with the same bound and closing line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from toon_format import encode

from agentmonitors.cli.main import main
from tests.daemon.fake_daemon import FakeDaemon, reply_with, short_socket_path

RECORDS = [
    {"id": f"E{number}", "monitorId": "notes", "title": f"File changed: n{number}.md"}
    for number in range(60)
]


@pytest.fixture
def old_daemon() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A socket answering ``events.list`` with the whole record array, as daemons did
    before ``limit`` and ``render`` (it ignores both)."""
    requests: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        requests.append(request)
        return {"id": request["id"], "result": RECORDS}

    with short_socket_path("amtoon-") as path:
        daemon = FakeDaemon(path, reply_with(answer))
        try:
            yield path, requests
        finally:
            daemon.close()


def test_an_old_daemons_records_are_encoded_here_with_the_same_bound(
    old_daemon: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, requests = old_daemon
    code = main(["events", "list", "--session", "S1", "--socket", path, "--format", "toon"])
    out = capsys.readouterr().out
    assert code == 0
    # The command asked for a rendering; the old daemon did not give one.
    assert requests[0]["method"] == "events.list"
    assert requests[0]["params"]["render"] == "toon"
    assert out == encode(RECORDS[:50]) + "\n10 more; use --limit/--all\n"


def test_json_never_asks_for_a_rendering(
    old_daemon: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, requests = old_daemon
    code = main(["events", "list", "--session", "S1", "--socket", path, "--format", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == RECORDS
    assert "render" not in requests[0]["params"]

"""Channel-attachment check the idle reaper uses (docs/architecture.md, "Seams")."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon import channels
from agentmonitors.daemon.channels import channel_attached
from agentmonitors.delivery.heartbeats import is_stale as heartbeat_is_stale
from agentmonitors.delivery.heartbeats import transports_dir

NOW = datetime(2026, 7, 12, 20, 55, 32, 123000, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)
WORKSPACE = "/work/project"
SOCKET = "/data/agentmonitors/workspaces/abcd/agentmonitors.sock"


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def record(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schemaVersion": 1,
        "transport": "channel",
        "pid": 4242,
        "workspacePath": WORKSPACE,
        "socketPath": SOCKET,
        "hostSessionId": "host-1",
        "startedAt": iso(NOW - timedelta(minutes=5)),
        "updatedAt": iso(NOW - timedelta(seconds=3)),
        "ttlMs": 30_000,
    }
    base.update(overrides)
    return base


def write(name: str, content: dict[str, Any] | str) -> Path:
    directory = Path(transports_dir())
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    text = content if isinstance(content, str) else json.dumps(content, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def test_registry_lives_under_the_xdg_data_root() -> None:
    assert transports_dir() == os.path.join(
        os.environ["XDG_DATA_HOME"], "agentmonitors", "transports"
    )


def test_missing_registry_is_not_attached() -> None:
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is False


def test_fresh_matching_channel_is_attached() -> None:
    path = write("channel-host-1.json", record())
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True
    assert path.exists()  # reading never deletes


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"transport": "hook", "ttlMs": 86_400_000}, id="hook-record"),
        pytest.param({"workspacePath": "/work/other"}, id="other-workspace"),
        pytest.param({"socketPath": "/tmp/other.sock"}, id="other-socket"),
        pytest.param({"workspacePath": None}, id="no-workspace"),
        pytest.param({"schemaVersion": 2}, id="future-schema"),
        pytest.param({"updatedAt": iso(NOW - timedelta(seconds=31))}, id="older-than-ttl"),
        pytest.param({"updatedAt": iso(NOW + timedelta(seconds=6))}, id="future"),
        pytest.param({"updatedAt": "yesterday"}, id="unparseable"),
        pytest.param({"updatedAt": NOW_MS}, id="numeric-timestamp"),
        pytest.param(
            {"updatedAt": iso(NOW - timedelta(seconds=11)), "ttlMs": 10_000}, id="own-ttl"
        ),
    ],
)
def test_records_that_do_not_count(overrides: dict[str, Any]) -> None:
    stale_path = write("channel-x.json", record(**overrides))
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is False
    assert stale_path.exists()  # never deleted here


def test_small_clock_skew_is_tolerated() -> None:
    write("channel-a.json", record(updatedAt=iso(NOW + timedelta(seconds=4))))
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True


def test_missing_ttl_defaults_to_the_channel_ttl() -> None:
    fresh = record(updatedAt=iso(NOW - timedelta(seconds=29)))
    del fresh["ttlMs"]
    write("channel-a.json", fresh)
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True
    stale = record(updatedAt=iso(NOW - timedelta(seconds=31)), ttlMs="soon")
    write("channel-a.json", stale)
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is False


def test_paths_compare_after_resolving_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real-project"
    real.mkdir()
    link = tmp_path / "link-project"
    link.symlink_to(real)
    sockets = tmp_path / "sockets"
    sockets.mkdir()
    sockets_link = tmp_path / "sockets-link"
    sockets_link.symlink_to(sockets)
    write(
        "channel-a.json",
        record(workspacePath=str(link), socketPath=str(sockets_link / "d.sock")),
    )
    assert channel_attached(str(sockets / "d.sock"), str(real), NOW_MS) is True


def test_junk_files_are_skipped_not_fatal() -> None:
    write("notes.txt", json.dumps(record()))  # not *.json
    write("broken.json", "{not json")
    write("list.json", "[1, 2]")
    Path(transports_dir(), "binary.json").write_bytes(b"\xff\xfe\x00\x80")
    Path(transports_dir(), "dir.json").mkdir()
    os.mkfifo(os.path.join(transports_dir(), "fifo.json"))
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is False
    write("channel-good.json", record())
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True


def test_symlinked_record_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(record()), encoding="utf-8")
    Path(transports_dir()).mkdir(parents=True)
    os.symlink(target, os.path.join(transports_dir(), "channel-link.json"))
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is False


def test_unreadable_registry_counts_as_attached(monkeypatch: pytest.MonkeyPatch) -> None:
    Path(transports_dir()).mkdir(parents=True)

    def denied(path: str) -> Any:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(channels.os, "scandir", denied)
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True


def test_registry_path_that_is_a_file_counts_as_attached() -> None:
    Path(transports_dir()).parent.mkdir(parents=True)
    Path(transports_dir()).write_text("oops", encoding="utf-8")
    assert channel_attached(SOCKET, WORKSPACE, NOW_MS) is True


def test_heartbeat_is_stale_edges() -> None:
    assert heartbeat_is_stale(record(updatedAt=iso(NOW - timedelta(seconds=30))), NOW_MS) is False
    assert heartbeat_is_stale(record(updatedAt=iso(NOW + timedelta(seconds=5))), NOW_MS) is False
    assert heartbeat_is_stale(record(updatedAt="2026-07-12T20:55:30"), NOW_MS) is False  # naive=UTC
    assert heartbeat_is_stale(record(updatedAt="2026-07-12T22:55:30+02:00"), NOW_MS) is False
    assert heartbeat_is_stale({}, NOW_MS) is True


def test_the_writers_reaper_and_the_daemon_apply_one_staleness_rule() -> None:
    """A record the daemon counts as attached is never reaped by a hook's write, and a
    record the daemon ignores as stale is: one rule, read in one module."""
    import time

    from agentmonitors.delivery.heartbeats import write_heartbeat

    now = datetime.now(UTC)
    # Naive timestamps mean UTC; a record without a usable ttl lives as long as a channel's.
    fresh = write("channel-fresh.json", record(updatedAt=now.strftime("%Y-%m-%dT%H:%M:%S")))
    odd_ttl = write("channel-odd.json", record(updatedAt=iso(now), ttlMs=1.5e4))
    stale = write(
        "channel-stale.json", record(updatedAt=iso(now - timedelta(seconds=31)), ttlMs=None)
    )
    now_ms = time.time_ns() // 1_000_000
    assert channel_attached(SOCKET, WORKSPACE, now_ms) is True
    write_heartbeat("hook", "host-9", workspace=WORKSPACE, socket_path=SOCKET, delivered=True)
    assert fresh.exists() and odd_ttl.exists()
    assert not stale.exists()
    assert [heartbeat_is_stale(json.loads(p.read_text()), now_ms) for p in (fresh, odd_ttl)] == [
        False,
        False,
    ]

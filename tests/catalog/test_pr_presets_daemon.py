"""Both PR presets, scaffolded by ``init``, run by a real daemon process with only gh stubbed.

The daemon's clock is the test's (``tests/daemon/clocked.py``), and it is days behind
the wall clock: a merged PR ages out after 6 h of *that* clock only if the daemon hands
its time to the command, which is what this proves along with the first-tick failure.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.catalog.pr_fixtures import ME, GitHub, pr, tool_bin
from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("jq") is None, reason="the presets need jq"),
]

START_S = START_MS // 1000
HOUR = 3600
SETTLE_S = 16  # high urgency settles for 15 s before it becomes an event


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Path:
    # Enabled first: the daemon's socket is resolved for an enabled project.
    assert run_cli("init", "--enable-only").code == 0
    return isolated_environment


@pytest.fixture
def daemon(workspace: Path, tmp_path: Path) -> Iterator[ClockedDaemon]:
    process = ClockedDaemon(workspace, tmp_path / "clock")
    yield process
    if process.process is not None:
        process.process.kill()
        process.process.communicate(timeout=10)


def test_a_daemon_reports_a_signed_out_gh_at_once_then_ages_out_a_merge(
    daemon: ClockedDaemon,
    run_cli: Callable[..., CliResult],
    workspace: Path,
    tmp_path: Path,
) -> None:
    assert run_cli("init", "reviews", "--yes", "--type", "pr-review").code == 0
    assert run_cli("init", "mine", "--yes", "--type", "my-prs").code == 0
    github = GitHub(tool_bin(tmp_path / "tools"))
    github.mode = "signed-out"
    github.put(
        pr(70, author=ME, state="MERGED", merged_at=START_S - HOUR),
        pr(71, requested=(ME,)),
    )

    # The daemon's first tick runs both; a token in its environment must not reach gh.
    daemon.start(env={"PATH": str(github.bin_dir), "GH_TOKEN": "from-a-profile"})
    daemon.advance(SETTLE_S)
    daemon.tick()
    events = events_since(daemon)
    # A preset fails by exiting non-zero, no signal: the summary says the exit status, and
    # the delivered text leads with it and the preset's own line saying what to do.
    assert sorted((e["monitor_id"], e["summary"]) for e in events) == [
        ("mine", "Command failing: my-prs (exit status 1)"),
        ("reviews", "Command failing: pr-review (exit status 1)"),
    ]
    for event in events:
        delivered = event["body"].split("\n\n")[0]
        assert delivered.startswith("The command failed: exit status 1."), delivered
        key = "my-prs" if event["monitor_id"] == "mine" else "pr-review"
        assert f"\n{key}: gh " in delivered, delivered
        assert "gh auth login" in delivered
        assert "signal" not in delivered
    assert {e["title"] for e in events} == {"My PRs that need me", "PRs awaiting my review"}
    assert {e["urgency"] for e in events} == {"high"}
    for event in events:
        assert "gh auth login" in json.loads(event["payload"])["stderrTail"]
    calls = github.calls()
    assert calls
    assert all(call["cwd"] == str(workspace) for call in calls)
    assert all(not any(call["tokens"].values()) for call in calls)

    # Signed in: one recovery each; the good run is the baseline.
    github.mode = "ok"
    github.publish()
    daemon.advance(5 * 60)
    daemon.tick()
    daemon.advance(SETTLE_S)
    daemon.tick()
    assert sorted((e["monitor_id"], e["summary"]) for e in events_since(daemon)) == [
        ("mine", "Command recovered: my-prs"),
        ("reviews", "Command recovered: pr-review"),
    ]

    # Nothing changes while the merge is younger than 6 h by the daemon's clock.
    daemon.advance(4 * HOUR)
    daemon.tick()
    daemon.advance(SETTLE_S)
    daemon.tick()
    assert events_since(daemon) == []

    # Past 6 h after the merge: the merged row leaves my-prs, once.
    daemon.advance(HOUR + 5 * 60)
    daemon.tick()
    daemon.advance(SETTLE_S)
    daemon.tick()
    (expired,) = events_since(daemon)
    assert (expired["monitor_id"], expired["summary"]) == ("mine", "Command output changed: my-prs")
    assert json.loads(json.loads(expired["payload"])["stdout"]) == []
    daemon.advance(10 * 60)
    daemon.tick()
    daemon.advance(SETTLE_S)
    daemon.tick()
    assert events_since(daemon) == []


def events_since(daemon: ClockedDaemon) -> list[dict[str, str]]:
    """The events stored since the last call, as column dicts, oldest first."""
    columns = ("monitor_id", "title", "summary", "urgency", "payload", "body")
    rows = daemon.query(
        f"SELECT rowid, {', '.join(columns)} FROM monitor_events WHERE rowid > ? ORDER BY rowid",
        daemon.seen,
    )
    if rows:
        daemon.seen = rows[-1][0]
    return [dict(zip(columns, row[1:], strict=True)) for row in rows]

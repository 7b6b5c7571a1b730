"""Agent-declared watches through a real daemon: declare, evaluate, deliver, reap, restart.

The daemon runs in its own process on its real socket and database with a clock the
test sets (``clocked_daemon.py``); the CLI runs in-process against that socket. Each
test is one rule of the watch contract, asserted on the records, the rows and the
events the declaring session (and no other) receives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon
from tests.fixtures.example_source.install import install_example
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]
ULID = "[0-9A-HJKMNP-TV-Z]{26}"
DORMANCY_S = 30 * 60


class WatchDaemon(ClockedDaemon):
    """A clocked daemon over a workspace with no monitor files of its own."""

    def start(self, env: dict[str, str] | None = None) -> None:
        import os
        import subprocess
        import sys

        from tests.daemon.clocked import LAUNCHER, REPO_ROOT

        environment = {**os.environ, **(env or {})}
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
        )
        self.process = subprocess.Popen(
            [sys.executable, str(LAUNCHER), str(self.clock_file), str(self.root)],
            cwd=self.root,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wait_for(lambda: ping(self.socket))

    def rpc(self, method: str, **params: Any) -> Any:
        return call(self.socket, method, params, timeout_s=30)

    def watch_rows(self) -> list[tuple[Any, ...]]:
        return self.query(
            "SELECT id, session_id, status, reaped_at FROM ephemeral_monitors ORDER BY id"
        )

    def observations(self, monitor_id: str) -> int:
        return len(self.results(monitor_id))


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    (isolated_environment / "status.txt").write_text("pending\n")
    return isolated_environment


@pytest.fixture
def daemon(workspace: Path, tmp_path: Path) -> Iterator[WatchDaemon]:
    process = WatchDaemon(workspace, tmp_path / "clock")
    process.start()
    yield process
    if process.process is not None:
        process.process.kill()
        process.process.communicate(timeout=10)


def open_session(run_cli: Run, host: str, *extra: str) -> str:
    result = run_cli("session", "open", "--host-session-id", host, "--format", "id", *extra)
    assert result.code == 0, result.err
    return result.out.strip()


def declare(run_cli: Run, session: str, *extra: str, source: str = "file-fingerprint") -> Any:
    result = run_cli("watch", source, "--session", session, "--format", "json", *extra)
    assert result.code == 0, (result.out, result.err)
    return result.json()


def declare_status(run_cli: Run, session: str, *extra: str) -> dict[str, Any]:
    record: dict[str, Any] = declare(
        run_cli, session, "--scope", '{"globs": ["status.txt"], "interval": "1s"}', *extra
    )
    return record


def baselined(daemon: WatchDaemon, monitor_id: str) -> None:
    """The watch's first observation (its baseline) is stored."""
    daemon.tick()
    wait_for(lambda: daemon.observations(monitor_id) >= 1)


def change_and_tick(daemon: WatchDaemon, path: Path, text: str) -> None:
    path.write_text(text)
    daemon.advance(5)
    daemon.tick()


def events_of(daemon: WatchDaemon, monitor_id: str) -> list[tuple[Any, ...]]:
    return daemon.query(
        "SELECT id, title, body, urgency FROM monitor_events WHERE monitor_id = ? ORDER BY id",
        monitor_id,
    )


def projections(daemon: WatchDaemon, event_id: str) -> list[str]:
    rows = daemon.query(
        "SELECT session_id FROM session_event_state WHERE event_id = ? ORDER BY session_id",
        event_id,
    )
    return [row[0] for row in rows]


# --------------------------------------------------------------------------- CLI


def test_declare_list_and_cancel_print_the_records(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-cli")
    text = run_cli(
        "watch",
        "declare",
        "file-fingerprint",
        "--session",
        session,
        "--scope",
        "globs=status.txt",
        "--urgency",
        "normal..high",
    )
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert re.fullmatch(rf"Declared ephemeral monitor: ephemeral:{session}/{ULID}", lines[0])
    assert lines[1:] == ["Source: file-fingerprint", "Urgency: normal..high"]
    first = lines[0].split(": ", 1)[1]
    # `watch <source>` is `watch declare <source>`.
    second = declare(run_cli, session, "--scope", "globs=other.txt", "--display-name", "Other")
    assert second["displayName"] == "Other"

    listed = run_cli("watch", "list", "--session", session)
    assert listed.out.splitlines() == [
        f"{first}  file-fingerprint  normal..high  active",
        f"{second['id']}  file-fingerprint  normal  active",
    ]
    as_json = run_cli("watch", "list", "--session", session, "--format", "json").json()
    assert [record["id"] for record in as_json] == [first, second["id"]]  # oldest first
    assert as_json[0]["scope"] == {"globs": "status.txt"}
    assert (as_json[0]["urgency"], as_json[0]["urgencyMax"]) == ("normal", "high")

    cancelled = run_cli("watch", "cancel", first, "--session", session)
    assert cancelled.out.strip() == f"Cancelled ephemeral monitor: {first}"
    again = run_cli("watch", "cancel", second["id"], "--session", session, "--format", "json")
    assert again.json()["status"] == "reaped"
    assert "reapedAt" in again.json()
    empty = run_cli("watch", "list", "--session", session)
    assert empty.out.strip() == "No ephemeral monitors found."
    assert run_cli("watch", "list", "--session", session, "--format", "json").json() == []


def test_scope_forms_and_syntax_errors(workspace: Path, daemon: WatchDaemon, run_cli: Run) -> None:
    session = open_session(run_cli, "host-scope")
    record = declare(run_cli, session, "--scope", ' { "globs": ["a.txt", "b/*.md"] } ')
    assert record["scope"] == {"globs": ["a.txt", "b/*.md"]}
    # key=value: split on commas, trimmed, empties dropped, split at the first `=`.
    record = declare(
        run_cli,
        session,
        "--scope",
        " cron = */5 * * * * ,, timezone=Europe/Paris ,",
        source="schedule",
    )
    assert record["scope"] == {"cron": " */5 * * * *", "timezone": "Europe/Paris"}

    bad = run_cli("watch", "file-fingerprint", "--session", session, "--scope", "globs")
    assert bad.code == 1
    assert bad.out == ""
    not_a_pair = '--scope entry "globs" is not a key=value pair (or a JSON object)'
    assert bad.err.strip() == f"error: {not_a_pair}"
    as_json = run_cli(
        "watch", "file-fingerprint", "--session", session, "--scope", "[1]", "--format", "json"
    )
    assert as_json.code == 1
    assert as_json.json() == {"error": not_a_pair.replace('"globs"', '"[1]"')}
    not_object = run_cli(
        "watch", "file-fingerprint", "--session", session, "--scope", "{1", "--format", "json"
    )
    assert not_object.code == 1
    assert not_object.json()["error"].startswith("--scope is not valid JSON")
    assert len(daemon.watch_rows()) == 2
    # An unknown key passes, as in `validate`, with the warning `validate` gives.
    typo = run_cli(
        "watch", "file-fingerprint", "--session", session, "--scope", "globs=a.txt,ignroe=b"
    )
    assert typo.code == 0
    assert typo.err.strip() == (
        'Warning: unknown key "watch.ignroe" is ignored — did you mean "ignore"?'
    )
    warned = declare(run_cli, session, "--scope", "globs=a.txt,ignroe=b")
    assert warned["warnings"] == ['unknown key "watch.ignroe" is ignored — did you mean "ignore"?']
    assert "warnings" not in record


def test_an_unreachable_daemon_is_reported_on_stderr_even_under_json(
    workspace: Path, run_cli: Run
) -> None:
    result = run_cli(
        "watch", "list", "--session", "nobody", "--format", "json", "--socket",
        str(workspace / "none.sock"),
    )  # fmt: skip
    assert result.code == 1
    assert result.out == ""
    assert "error:" in result.err and "daemon" in result.err


# --------------------------------------------------------------------------- declaration checks


def test_declaration_checks_run_in_order_and_a_failure_registers_nothing(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    lead = open_session(run_cli, "host-lead")
    helper = open_session(run_cli, "host-sub", "--role", "subagent")
    closed = open_session(run_cli, "host-closed")
    assert run_cli("session", "close", closed).code == 0

    def refused(session: str, source: str, scope: dict[str, Any], **more: str) -> str:
        try:
            daemon.rpc("watch.declare", sessionId=session, source=source, scope=scope, **more)
        except Exception as error:  # DaemonError: the message is the contract
            return str(error)
        raise AssertionError("declared")

    bad_scope: dict[str, Any] = {"globs": 42}
    # 1. The session: unknown, not active, not lead (before the source is even looked at).
    assert "Session not found: nobody" in refused("nobody", "no-such-source", bad_scope)
    assert "is dormant" in refused(closed, "no-such-source", bad_scope)
    assert "subagent session" in refused(helper, "no-such-source", bad_scope)
    # 2. The source, with the ones available.
    unknown = refused(lead, "no-such-source", bad_scope)
    assert unknown.startswith('Unknown source "no-such-source". Available sources: ')
    assert "file-fingerprint" in unknown
    # 3. The scope, by the validator `validate` uses (before the urgency is looked at).
    scope_error = refused(lead, "file-fingerprint", bad_scope, urgency="urgent")
    assert scope_error.startswith('Invalid scope for source "file-fingerprint": globs')
    missing = refused(lead, "file-fingerprint", {})
    assert missing.startswith('Invalid scope for source "file-fingerprint": globs')
    # 4. The frontmatter: urgency, and runtime keys such as interval.
    assert "urgency" in refused(lead, "file-fingerprint", {"globs": ["a"]}, urgency="urgent")
    assert "urgency" in refused(lead, "file-fingerprint", {"globs": ["a"]}, urgency="high..low")
    assert "interval" in refused(lead, "file-fingerprint", {"globs": ["a"], "interval": "soon"})
    # 5. A display name that is only whitespace.
    assert "--display-name" in refused(lead, "file-fingerprint", {"globs": ["a"]}, displayName=" ")

    assert daemon.watch_rows() == []
    # The CLI shows the same failure and exits 1.
    cli = run_cli("watch", "no-such-source", "--session", lead, "--scope", "a=b")
    assert cli.code == 1
    assert cli.err.startswith('error: Unknown source "no-such-source"')
    cli_json = run_cli(
        "watch", "file-fingerprint", "--session", "nobody", "--scope", "globs=a", "--format", "json"
    )
    assert cli_json.code == 1
    assert cli_json.json()["error"].startswith("Session not found: nobody")


def test_a_scope_key_named_type_never_retargets_the_watch(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-type")
    record = daemon.rpc(
        "watch.declare",
        sessionId=session,
        source="file-fingerprint",
        scope={"globs": ["status.txt"], "type": "command-poll"},
    )
    assert record["sourceName"] == "file-fingerprint"
    baselined(daemon, record["id"])
    rows = daemon.query(
        "SELECT source_name FROM observation_history WHERE monitor_id = ?", record["id"]
    )
    assert rows and {row[0] for row in rows} == {"file-fingerprint"}


# --------------------------------------------------------------------------- identity & storage


def test_identity_and_stored_row(workspace: Path, daemon: WatchDaemon, run_cli: Run) -> None:
    session = open_session(run_cli, "host-id")
    before = daemon.query("SELECT last_active_at FROM agent_sessions WHERE id = ?", session)
    daemon.advance(600)
    record = declare_status(
        run_cli, session, "--urgency", "low..high", "--instruction", "Re-run the deploy."
    )
    assert re.fullmatch(rf"ephemeral:{session}/{ULID}", record["id"])
    assert "/" not in record["id"].split("/", 1)[1]
    row = daemon.query(
        "SELECT session_id, workspace_path, source_name, scope, urgency, urgency_max,"
        " instruction, display_name, status, reaped_at FROM ephemeral_monitors WHERE id = ?",
        record["id"],
    )
    assert row == [
        (
            session,
            str(workspace),
            "file-fingerprint",
            '{"globs":["status.txt"],"interval":"1s"}',
            "low",
            "high",
            "Re-run the deploy.",
            None,
            "active",
            None,
        )
    ]
    assert record["workspacePath"] == str(workspace)
    assert record["status"] == "active" and "reapedAt" not in record
    # Declaring is session activity.
    after = daemon.query("SELECT last_active_at FROM agent_sessions WHERE id = ?", session)
    assert after[0][0] == before[0][0] + 600
    # Nothing was observed by the declaration itself beyond the daemon's own tick.
    assert events_of(daemon, record["id"]) == []


# --------------------------------------------------------------------------- evaluation


def test_first_observation_is_a_baseline_then_changes_fire_with_name_and_instruction(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-eval")
    named = declare_status(
        run_cli, session, "--display-name", "CI status", "--instruction", "Tell the user."
    )
    plain = declare_status(run_cli, session)
    baselined(daemon, named["id"])
    baselined(daemon, plain["id"])
    assert events_of(daemon, named["id"]) == [] and events_of(daemon, plain["id"]) == []

    change_and_tick(daemon, workspace / "status.txt", "green\n")
    wait_for(lambda: events_of(daemon, named["id"]) and events_of(daemon, plain["id"]))
    ((_, title, body, urgency),) = events_of(daemon, named["id"])
    assert (title, body, urgency) == ("CI status", "Tell the user.", "normal")
    ((_, plain_title, plain_body, _),) = events_of(daemon, plain["id"])
    assert plain_title == f"File changed: {workspace / 'status.txt'}"
    assert plain_body == ""

    listed = run_cli("events", "list", "--session", session, "--format", "json").json()
    assert {record["monitorId"] for record in listed} == {named["id"], plain["id"]}
    assert {record["deliveryState"] for record in listed} == {"unread"}


def test_a_third_party_source_can_be_watched(workspace: Path, tmp_path: Path, run_cli: Run) -> None:
    site = install_example(tmp_path / "site")
    daemon = WatchDaemon(workspace, tmp_path / "clock")
    daemon.start({"PYTHONPATH": str(site)})
    try:
        session = open_session(run_cli, "host-plugin")
        refused = run_cli(
            "watch", "example-echo", "--session", session, "--scope", '{"message": 5}'
        )
        assert refused.code == 1
        assert refused.err.startswith('error: Invalid scope for source "example-echo": message')
        record = declare(
            run_cli, session, "--scope", "message=hello from a plugin", source="example-echo"
        )
        daemon.tick()
        wait_for(lambda: events_of(daemon, record["id"]))
        assert projections(daemon, events_of(daemon, record["id"])[0][0]) == [session]
        # Uninstalled later: the watch is reported as errored, never silently dropped.
        daemon.stop()
        daemon.start()
        errored = daemon.tick()["erroredObservations"]
        assert [item["monitorId"] for item in errored] == [record["id"]]
        assert errored[0]["message"].startswith('Unknown source "example-echo"')
    finally:
        if daemon.process is not None:
            daemon.process.kill()
            daemon.process.communicate(timeout=10)


# --------------------------------------------------------------------------- projection & reads


def test_events_go_to_the_declaring_session_only_and_unscoped_reads_hide_them(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    owner = open_session(run_cli, "host-owner")
    sibling = open_session(run_cli, "host-sibling")
    record = declare_status(run_cli, owner)
    baselined(daemon, record["id"])
    change_and_tick(daemon, workspace / "status.txt", "red\n")
    wait_for(lambda: events_of(daemon, record["id"]))
    event_id = events_of(daemon, record["id"])[0][0]
    assert projections(daemon, event_id) == [owner]

    mine = run_cli("events", "list", "--session", owner, "--format", "json").json()
    assert [item["id"] for item in mine] == [event_id]
    assert run_cli("events", "list", "--session", sibling, "--format", "json").json() == []
    # Session-less reads never show a watch's events, even when its id is named.
    assert daemon.rpc("events.list") == []
    assert daemon.rpc("events.list", monitorId=record["id"]) == []
    assert all(not row["monitorId"].startswith("ephemeral:") for row in daemon.rpc("history.list"))
    audit = daemon.rpc("history.list", monitorId=record["id"])
    assert {row["result"] for row in audit} >= {"triggered"}
    # Only the owner may cancel it; anyone else is told it does not exist.
    foreign = run_cli("watch", "cancel", record["id"], "--session", sibling)
    assert foreign.code == 1
    assert foreign.err.strip() == (
        f'error: Ephemeral monitor "{record["id"]}" was not found for session "{sibling}".'
    )
    assert daemon.query("SELECT status FROM ephemeral_monitors") == [("active",)]


# --------------------------------------------------------------------------- lifecycle


def test_cancel_stops_observing_and_keeps_what_was_delivered(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-cancel")
    record = declare_status(run_cli, session)
    baselined(daemon, record["id"])
    change_and_tick(daemon, workspace / "status.txt", "one\n")
    wait_for(lambda: events_of(daemon, record["id"]))
    assert run_cli("watch", "cancel", record["id"], "--session", session).code == 0
    seen = daemon.observations(record["id"])

    change_and_tick(daemon, workspace / "status.txt", "two\n")
    daemon.advance(5)
    daemon.tick()
    assert daemon.observations(record["id"]) == seen
    assert len(events_of(daemon, record["id"])) == 1
    # The event produced before the cancel stays deliverable.
    unread = run_cli("events", "list", "--session", session, "--unread", "--format", "json")
    assert [item["monitorId"] for item in unread.json()] == [record["id"]]
    status, reaped_at = daemon.query(
        "SELECT status, reaped_at FROM ephemeral_monitors WHERE id = ?", record["id"]
    )[0]
    assert status == "reaped" and reaped_at == daemon.now_ms // 1000 - 10


def test_closing_the_session_reaps_its_watches_and_resuming_never_rearms_them(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-close")
    record = declare_status(run_cli, session)
    baselined(daemon, record["id"])
    assert run_cli("session", "close", session).code == 0
    assert daemon.query("SELECT status FROM ephemeral_monitors") == [("reaped",)]
    seen = daemon.observations(record["id"])

    # The host resumes the same session: it is active again, its watch is not.
    assert open_session(run_cli, "host-close") == session
    change_and_tick(daemon, workspace / "status.txt", "after close\n")
    assert daemon.observations(record["id"]) == seen
    assert events_of(daemon, record["id"]) == []
    assert run_cli("watch", "list", "--session", session, "--format", "json").json() == []


def test_dormancy_reaps_watches_of_idle_sessions_only(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    idle = open_session(run_cli, "host-idle")
    busy = open_session(run_cli, "host-busy")
    idle_watch = declare_status(run_cli, idle)
    daemon.advance(DORMANCY_S - 60)
    # A declaration counts as activity: this session's 30 minutes start again here.
    busy_watch = declare_status(run_cli, busy)
    daemon.advance(120)
    daemon.tick()
    sessions = dict(daemon.query("SELECT id, status FROM agent_sessions"))
    assert sessions == {idle: "dormant", busy: "active"}
    watches = dict(daemon.query("SELECT id, status FROM ephemeral_monitors"))
    assert watches == {idle_watch["id"]: "reaped", busy_watch["id"]: "active"}


def test_a_watch_survives_a_daemon_restart_and_a_reaped_one_stays_reaped(
    workspace: Path, daemon: WatchDaemon, run_cli: Run
) -> None:
    session = open_session(run_cli, "host-restart")
    kept = declare_status(run_cli, session)
    gone = declare(run_cli, session, "--scope", "globs=status.txt")
    baselined(daemon, kept["id"])
    baselined(daemon, gone["id"])
    assert run_cli("watch", "cancel", gone["id"], "--session", session).code == 0
    gone_seen = daemon.observations(gone["id"])
    daemon.stop()

    # A change made while no daemon ran is found against the stored baseline.
    (workspace / "status.txt").write_text("changed while stopped\n")
    daemon.advance(5)
    daemon.start()
    daemon.tick()
    wait_for(lambda: events_of(daemon, kept["id"]))
    event_id = events_of(daemon, kept["id"])[0][0]
    assert projections(daemon, event_id) == [session]
    assert daemon.observations(gone["id"]) == gone_seen
    assert events_of(daemon, gone["id"]) == []
    listed = run_cli("watch", "list", "--session", session, "--format", "json").json()
    assert [record["id"] for record in listed] == [kept["id"]]

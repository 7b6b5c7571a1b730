"""No raw control character reaches a listing: TOON, text and JSON alike.

Titles, summaries, bodies, monitor names and agent identities come from files and
commands nobody vetted; an escape sequence in one must reach the terminal or the
agent's context as visible text, never as a colour change, a bell or a CSI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmonitors.paths import resolve_db_path
from agentmonitors.sources.observation import Observation
from agentmonitors.store import queries
from agentmonitors.store.database import Database
from tests.cli.test_bounded_output import cli, project_with_events
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.transports.clocked_project import Run

HOSTILE = "Red \x1b[31malert\x07 del\x7f csi\x9b2J end"
# C0 except newline and tab, DEL, C1.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
VISIBLE = ("\\u001b[31malert", "\\u0007", "\\u007f", "\\u009b2J")


def assert_clean(output: str) -> None:
    found = RAW_CONTROL.findall(output)
    assert not found, f"raw control characters reached the output: {found!r}"


@pytest.fixture
def hostile_event(
    isolated_environment: Path, run_cli: Run, tmp_path: Path
) -> Iterator[tuple[ClockedDaemon, str]]:
    assert run_cli("init", "--enable-only").code == 0
    observation = Observation(
        title=f"Title {HOSTILE}", summary=f"Summary {HOSTILE}", body=f"Body {HOSTILE}"
    )
    daemon, session = project_with_events(isolated_environment, tmp_path / "clock", [observation])
    yield daemon, session
    daemon.stop()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["toon", "text", "json"])
def test_events_list_shows_control_characters_as_escapes(
    hostile_event: tuple[ClockedDaemon, str], fmt: str
) -> None:
    daemon, session = hostile_event
    listed = cli("events", "list", "--session", session, "--socket", daemon.socket, "--format", fmt)
    assert listed.code == 0, listed.err
    assert_clean(listed.out)
    assert "Title Red " in listed.out
    if fmt == "json":
        # In JSON the escape is the character itself: nothing is lost for a script.
        (record,) = json.loads(listed.out)
        assert (record["title"], record["summary"], record["body"]) == (
            f"Title {HOSTILE}",
            f"Summary {HOSTILE}",
            f"Body {HOSTILE}",
        )
    else:
        assert all(escape in listed.out for escape in VISIBLE)
    if fmt == "toon":
        assert "Body Red " in listed.out


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_session_list_shows_a_hostile_agent_identity_as_escapes(
    hostile_event: tuple[ClockedDaemon, str], fmt: str
) -> None:
    daemon, _session = hostile_event
    opened = cli(
        "session",
        "open",
        "--host-session-id",
        "host-hostile",
        "--agent-identity",
        HOSTILE,
        "--socket",
        daemon.socket,
        "--format",
        "id",
    )
    assert opened.code == 0, opened.err
    listed = cli("session", "list", "--socket", daemon.socket, "--format", fmt)
    assert listed.code == 0, listed.err
    assert_clean(listed.out)
    if fmt == "json":
        identities = {record["agentIdentity"] for record in json.loads(listed.out)}
        assert HOSTILE in identities
    else:
        assert all(escape in listed.out for escape in VISIBLE)


@pytest.mark.parametrize("fmt", ["toon", "text", "json"])
def test_monitor_history_shows_control_characters_as_escapes(
    isolated_environment: Path, run_cli: Run, fmt: str
) -> None:
    # No daemon: history is read from the store file, as after the daemon exits.
    workspace = str(isolated_environment)
    db = Database(resolve_db_path(workspace))
    with db.write() as conn:
        queries.add_history(
            conn,
            monitor_id=f"build{HOSTILE}",
            workspace=workspace,
            source_name="command-poll",
            result="errored",
            data={"error": f"exit 1: {HOSTILE}"},
            now_ms=START_MS,
        )
    db.close()
    shown = run_cli("monitor", "history", "--format", fmt)
    assert shown.code == 0, shown.err
    assert_clean(shown.out)
    if fmt == "json":
        (row,) = json.loads(shown.out)
        assert row["observationData"]["error"] == f"exit 1: {HOSTILE}"
    else:
        assert all(escape in shown.out for escape in VISIBLE)


@pytest.mark.parametrize("fmt", ["toon", "text", "json"])
def test_scan_shows_a_hostile_monitor_name_as_escapes(
    isolated_environment: Path, run_cli: Run, fmt: str
) -> None:
    folder = isolated_environment / ".claude" / "monitors" / "evil"
    folder.mkdir(parents=True)
    # YAML's own escapes put the raw characters into the parsed name.
    (folder / "MONITOR.md").write_text(
        '---\nname: "Red \\e[31malert\\a del\\x7f csi\\x9b2J end"\n'
        "watch:\n  type: file-fingerprint\n  globs: '*.md'\n---\nLook.\n"
    )
    scanned = run_cli("scan", ".claude/monitors", "--format", fmt)
    assert scanned.code == 0, scanned.err
    assert_clean(scanned.out)
    if fmt == "json":
        assert json.loads(scanned.out)["monitors"][0]["name"] == HOSTILE
    else:
        assert all(escape in scanned.out for escape in VISIBLE)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_validate_shows_a_hostile_key_as_escapes(
    isolated_environment: Path, run_cli: Run, fmt: str
) -> None:
    folder = isolated_environment / ".claude" / "monitors" / "evil"
    folder.mkdir(parents=True)
    # An unknown key is quoted back in its warning; YAML's escapes make it raw.
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: file-fingerprint\n  globs: '*.md'\n"
        '  "Red \\e[31malert\\a del\\x7f csi\\x9b2J end": 1\n---\nLook.\n'
    )
    checked = run_cli("validate", ".claude/monitors", "--format", fmt)
    assert checked.code == 0, checked.err
    assert_clean(checked.out)
    if fmt == "json":
        assert HOSTILE in json.loads(checked.out)["warnings"][0]["warning"]
    else:
        assert all(escape in checked.out for escape in VISIBLE)

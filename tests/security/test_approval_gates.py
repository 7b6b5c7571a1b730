"""Holes 3, 4, 6 and 13: what approval covers, who gives it, and where it is checked.

- ``monitor test`` runs nothing, sends nothing and reads nothing outside the project
  for a monitor the user has not approved (3);
- the approval key is one canonical form: a spelling the schema also accepts, or a
  changed env value, makes the monitor wait again (4);
- api-poll follows a redirect only within the approved origin (6);
- approving is the user's act: refused where an agent host's variables are set, and
  without a terminal unless ``--yes`` (13), for ``monitor approve`` and ``init`` alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.catalog.trust import ledger_path
from tests.conftest import CliResult
from tests.security.hostile import (
    add_monitor,
    agentmonitors,
    blocked_ids,
    once_json,
    recording_server,
)

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    (isolated_environment / ".claude" / "monitors").mkdir()
    return isolated_environment


# ------------------------------------------------------------------------ 3: monitor test


def test_monitor_test_runs_no_unapproved_command(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    add_monitor(
        project,
        "poller",
        "---\nwatch:\n  type: command-poll\n"
        f'  command: ["sh", "-c", "touch {marker}; echo hi"]\n---\nReact.\n',
    )
    done = agentmonitors(project, "monitor", "test", "poller")
    assert done.returncode == 1
    assert "agentmonitors monitor approve poller" in done.stderr
    assert "Nothing was run" in done.stderr
    assert not marker.exists()
    assert agentmonitors(project, "monitor", "approve", "--yes", "poller").returncode == 0
    assert agentmonitors(project, "monitor", "test", "poller").returncode == 0
    assert marker.exists()


def test_monitor_test_sends_no_token_to_an_unapproved_host(project: Path) -> None:
    with recording_server() as server:
        add_monitor(
            project,
            "api",
            "---\nwatch:\n  type: api-poll\n"
            f"  url: {server.url('/status')}\n"
            "  auth:\n    type: bearer\n    token-env: DEPLOY_TOKEN\n---\nReact.\n",
        )
        done = agentmonitors(
            project, "monitor", "test", "api", "--format", "json", env={"DEPLOY_TOKEN": "t0ps3cret"}
        )
        assert done.returncode == 1
        assert "monitor approve api" in json.loads(done.stdout)["error"]
        assert server.requests == []


def test_monitor_test_reads_nothing_outside_the_project(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the-secret-content\n")
    add_monitor(
        project,
        "peek",
        f"---\nwatch:\n  type: file-fingerprint\n  globs: {outside}/*\n---\nRead.\n",
    )
    done = agentmonitors(project, "monitor", "test", "peek")
    assert done.returncode == 1
    assert "monitor approve peek" in done.stderr
    assert "secret" not in done.stdout


# ------------------------------------------------------------------------ 4: the key


def approve(project: Path, monitor_id: str) -> None:
    done = agentmonitors(project, "monitor", "approve", "--yes", monitor_id)
    assert done.returncode == 0, done.stderr


def test_an_alias_spelling_after_approval_needs_a_new_approval(project: Path) -> None:
    # The schema accepts token_env for token-env: approved under that spelling, the
    # variable is still part of what was approved, so sending another asks again.
    path = add_monitor(
        project,
        "api",
        "---\nwatch:\n  type: api-poll\n  url: http://127.0.0.1:9/a\n"
        "  auth:\n    type: bearer\n    token_env: HARMLESS\n---\nReact.\n",
    )
    approve(project, "api")
    assert "api" not in blocked_ids(once_json(project))
    assert "HARMLESS" in Path(ledger_path(str(project))).read_text()
    path.write_text(path.read_text().replace("token_env: HARMLESS", "token_env: AWS_SECRET"))
    assert "api" in blocked_ids(once_json(project))


def test_a_composite_part_under_an_alias_needs_a_new_approval(project: Path) -> None:
    head = "---\nwatch:\n  type: api-poll\n  interval: 5m\n"
    block = "  change_detection:\n    composite:\n      object_key: k\n      parts:\n"
    part = "        - id: a\n          url: http://127.0.0.1:9/a\n"
    path = add_monitor(project, "many", head + block + part + "---\nR.\n")
    approve(project, "many")
    assert "many" not in blocked_ids(once_json(project))
    other = "        - id: b\n          url: http://169.254.169.254/latest/meta-data/\n"
    path.write_text(head + block + part + other + "---\nR.\n")
    assert "many" in blocked_ids(once_json(project))


def test_a_changed_env_value_needs_a_new_approval_and_is_never_stored(
    project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "evil.sh"
    path = add_monitor(
        project,
        "env",
        "---\nwatch:\n  type: command-poll\n  command: [bash, -c, 'echo hi']\n"
        "  env:\n    BASH_ENV: /dev/null\n---\nReact.\n",
    )
    approve(project, "env")
    assert "env" not in blocked_ids(once_json(project))
    path.write_text(path.read_text().replace("/dev/null", str(script)))
    assert "env" in blocked_ids(once_json(project))
    ledger = Path(ledger_path(str(project))).read_text()
    assert "BASH_ENV" in ledger
    assert "/dev/null" not in ledger


# ------------------------------------------------------------------------ 6: redirects


def api_monitor(url: str) -> str:
    return (
        "---\nwatch:\n  type: api-poll\n"
        f"  url: {url}\n  interval: 1s\n"
        "  auth:\n    type: bearer\n    token-env: DEPLOY_TOKEN\n"
        "  change-detection:\n    strategy: text-diff\n---\nReact.\n"
    )


def test_a_redirect_to_another_origin_is_an_error_naming_where_it_went(project: Path) -> None:
    with recording_server() as elsewhere:
        target = elsewhere.url("/latest/meta-data/")
        routes = {"/status": (302, {"Location": target}, "")}
        with recording_server(routes) as approved:
            add_monitor(project, "api", api_monitor(approved.url("/status")))
            approve(project, "api")
            env = {"DEPLOY_TOKEN": "t0ps3cret"}
            done = agentmonitors(project, "daemon", "once", "--force", "--format", "json", env=env)
            report = json.loads(done.stdout)
            (error,) = [row for row in report["erroredObservations"] if row["monitorId"] == "api"]
            assert "redirected to " + elsewhere.origin in error["message"]
            assert "outside the approved origin" in error["message"]
            assert elsewhere.requests == []
            assert len(approved.requests) == 1


def test_a_redirect_within_the_origin_is_followed(project: Path) -> None:
    with recording_server({"/old": (301, {"Location": "/new"}, "")}) as server:
        add_monitor(project, "api", api_monitor(server.url("/old")))
        approve(project, "api")
        env = {"DEPLOY_TOKEN": "t0ps3cret"}
        done = agentmonitors(project, "daemon", "once", "--force", "--format", "json", env=env)
        report = json.loads(done.stdout)
        assert report["erroredObservations"] == []
        assert [request["path"] for request in server.requests] == ["/old", "/new"]
        assert server.requests[1]["headers"]["Authorization"] == "Bearer t0ps3cret"


# ------------------------------------------------------------------------ 13: the user's act


COMMAND_MONITOR = "---\nwatch:\n  type: command-poll\n  command: [echo, hi]\n---\nReact.\n"


@pytest.mark.parametrize("variable", ["CLAUDECODE", "CODEX_THREAD_ID", "CURSOR_AGENT"])
def test_an_agent_cannot_approve(project: Path, variable: str) -> None:
    add_monitor(project, "poller", COMMAND_MONITOR)
    for args in (("poller",), ("--yes", "poller"), ("--all", "--yes")):
        done = agentmonitors(project, "monitor", "approve", *args, env={variable: "1"})
        assert done.returncode == 1
        assert variable in done.stderr
    assert not Path(ledger_path(str(project))).exists()
    assert "poller" in blocked_ids(once_json(project))


def test_approval_without_a_terminal_needs_yes(project: Path) -> None:
    add_monitor(project, "poller", COMMAND_MONITOR)
    done = agentmonitors(project, "monitor", "approve", "poller")
    assert done.returncode == 1
    assert "interactive terminal" in done.stderr
    assert "--yes" in done.stderr
    assert "poller" in blocked_ids(once_json(project))
    assert agentmonitors(project, "monitor", "approve", "--yes", "poller").returncode == 0
    assert "poller" not in blocked_ids(once_json(project))


def test_an_agent_run_init_approves_nothing(project: Path) -> None:
    done = agentmonitors(
        project, "init", "poller", "--yes", "--type", "command-poll", env={"CLAUDECODE": "1"}
    )
    assert done.returncode == 0, done.stderr
    assert "Not approved" in done.stdout
    assert "monitor approve poller" in done.stdout
    assert "poller" in blocked_ids(once_json(project))


def test_the_user_at_a_terminal_approves_after_confirming(project: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    add_monitor(project, "poller", COMMAND_MONITOR)
    primary, secondary = pty.openpty()
    exe = os.path.join(os.path.dirname(sys.executable), "agentmonitors")
    process = subprocess.Popen(
        [exe, "monitor", "approve", "poller"],
        cwd=project,
        stdin=secondary,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        env={**os.environ, "PWD": str(project)},
    )
    os.close(secondary)
    seen = b""
    while b"Approve this monitor?" not in seen:
        seen += os.read(primary, 1024)
    assert b'runs ["echo", "hi"]' in seen
    os.write(primary, b"y\n")
    assert process.wait(timeout=30) == 0
    os.close(primary)
    assert "poller" not in blocked_ids(once_json(project))


def test_an_approval_recorded_before_values_were_hashed_is_carried_over_once(
    project: Path, tmp_path: Path
) -> None:
    from agentmonitors.catalog.trust import digest_of

    path = add_monitor(
        project,
        "env",
        "---\nwatch:\n  type: command-poll\n  command: [bash, -c, 'echo hi']\n"
        "  env:\n    BASH_ENV: /dev/null\n---\nReact.\n",
    )
    reach = {"argv": ["bash", "-c", "echo hi"], "cwd": None, "envKeys": ["BASH_ENV"]}
    ledger = Path(ledger_path(str(project)))
    ledger.parent.mkdir(parents=True, exist_ok=True)
    legacy = {"hash": digest_of("command-poll", reach), "source": "command-poll"}
    entry = {**legacy, "reach": reach, "approvedAt": "2026-01-02T03:04:05.000Z"}
    ledger.write_text(json.dumps({"version": 1, "approvals": {"env": entry}}))
    # An upgrade makes no approved monitor wait ...
    assert "env" not in blocked_ids(once_json(project))
    rewritten = json.loads(ledger.read_text())["approvals"]["env"]
    assert rewritten["keyVersion"] == 2
    assert rewritten["hash"] != legacy["hash"]
    assert rewritten["approvedAt"] == "2026-01-02T03:04:05.000Z"
    # ... and from then on a changed value waits again.
    path.write_text(path.read_text().replace("/dev/null", str(tmp_path / "evil.sh")))
    assert "env" in blocked_ids(once_json(project))

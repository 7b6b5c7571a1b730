"""``verify`` fails with the right kind, and cleans up, when the pipeline cannot prove itself."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.diagnosis.verify_helpers import (
    agentmonitors,
    process_alive,
    scaffold,
    verify,
    workspace_files,
)

FAST = {r"# interval: 30s": "interval: 1s"}


def _files_monitor(work: Path, glob: str, extra: dict[str, str] | None = None) -> None:
    scaffold(
        work, "files", "file-fingerprint", {r"'\*\*/\*\.ts'": f"'{glob}'", **FAST, **(extra or {})}
    )


def test_a_glob_whose_folder_is_missing_fails_as_no_files_matched(
    isolated_environment: Path,
) -> None:
    work = isolated_environment
    _files_monitor(work, "missing/**/*.ts")

    result = verify(work, "files")

    assert result.code == 1
    assert result.report["ok"] is False
    assert result.report["failure"]["kind"] == "no-files-matched"
    assert "missing" in result.report["failure"]["message"]
    assert {stage["status"] for stage in result.report["stages"]} == {"skip"}
    assert not (work / "missing").exists()


@pytest.mark.slow
def test_a_glob_that_matches_nothing_fails_fast_as_no_files_matched(
    isolated_environment: Path,
) -> None:
    work = isolated_environment
    (work / "src").mkdir()
    (work / "src" / "main.py").write_text("print()\n")
    _files_monitor(work, "src/**/*.zzz")

    result = verify(work, "files", "--trigger-cmd", "true")

    assert result.code == 1
    assert result.report["failure"] == {
        "kind": "no-files-matched",
        "message": "the monitor's globs (src/**/*.zzz) match no file",
    }
    assert result.stage("observe")["status"] == "fail"
    assert result.stage("materialize")["status"] == "skip"
    assert result.report["additionalContext"] is None
    # Failing fast: two one-second observations, not the whole budget (three intervals).
    assert result.report["elapsedMs"] < 10_000


@pytest.mark.slow
def test_a_trigger_that_changes_nothing_fails_as_no_change(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    _files_monitor(work, "src/**/*.ts")

    result = verify(work, "files", "--trigger-cmd", "true")

    assert result.code == 1
    assert result.report["failure"] == {
        "kind": "no-change",
        "message": "two observations after the trigger saw no change",
    }
    assert result.stage("baseline")["status"] == "pass"
    assert result.stage("trigger")["status"] == "pass"
    assert result.stage("observe")["status"] == "fail"


def test_a_failing_trigger_command_is_a_setup_failure(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "a.ts").write_text("x\n")
    _files_monitor(work, "*.ts")

    result = verify(work, "files", "--trigger-cmd", "echo nope >&2; exit 7")

    assert result.code == 1
    assert result.report["failure"]["kind"] == "setup"
    assert result.report["failure"]["message"] == "--trigger-cmd exited with 7: nope"
    assert result.stage("trigger")["status"] == "fail"


def test_a_long_trigger_error_says_how_much_of_it_is_quoted(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "a.ts").write_text("x\n")
    _files_monitor(work, "*.ts")

    long_error = "python3 -c \"import sys; sys.stderr.write('x' * 1000 + 'the end')\"; exit 7"
    result = verify(work, "files", "--trigger-cmd", long_error)

    message = result.report["failure"]["message"]
    assert message.startswith("--trigger-cmd exited with 7: (last 400 of 1007 characters) x")
    assert message.endswith("the end")


def test_a_daemon_that_cannot_start_fails_as_daemon_died_with_its_output(
    isolated_environment: Path, tmp_path: Path
) -> None:
    work = isolated_environment
    (work / "a.ts").write_text("x\n")
    _files_monitor(work, "*.ts")
    # The daemon child (and only it) dies at start-up, before it can listen.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sys\n"
        "if 'daemon' in sys.orig_argv:\n"
        "    sys.stderr.write('cannot start: the test forbids it\\n')\n"
        "    sys.stderr.flush()\n"
        "    os._exit(3)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "verify", "files", "--format", "json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["failure"] == {
        "kind": "daemon-died",
        "message": "the daemon exited with code 3 before answering",
    }
    assert "cannot start: the test forbids it" in report["daemonStderr"]
    assert report["stages"][0] == {
        "name": "daemon",
        "status": "fail",
        "detail": "the daemon exited with code 3 before answering",
    }
    # No scratch file was made: the trigger comes after the daemon.
    assert not list(work.glob("agentmonitors-verify-*"))


def test_the_text_report_names_the_failed_stage(isolated_environment: Path) -> None:
    work = isolated_environment
    _files_monitor(work, "missing/*.ts")

    done = agentmonitors(work, "verify")

    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "agentmonitors verify: files"
    assert done.stdout.splitlines()[1] == "  - daemon"
    assert done.stdout.splitlines()[-1].startswith('FAIL  setup — glob "missing/*.ts"')


def test_both_trigger_modes_or_an_empty_command_are_usage_errors(
    isolated_environment: Path,
) -> None:
    work = isolated_environment
    _files_monitor(work, "*.ts")

    both = agentmonitors(work, "verify", "--manual", "--trigger-cmd", "true")
    empty = agentmonitors(work, "verify", "--trigger-cmd", " ")

    assert (both.returncode, both.stdout) == (2, "")
    assert both.stderr == "error: --trigger-cmd and --manual cannot be used together\n"
    assert (empty.returncode, empty.stderr) == (2, "error: --trigger-cmd must not be empty\n")


def test_an_unknown_monitor_lists_the_known_ones(isolated_environment: Path) -> None:
    work = isolated_environment
    _files_monitor(work, "*.ts")

    result = verify(work, "nope")

    assert result.code == 1
    assert result.report["failure"] == {
        "kind": "setup",
        "message": "no monitor nope (monitors: files)",
    }


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_still_cleans_up(
    isolated_environment: Path, signum: signal.Signals
) -> None:
    work = isolated_environment
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    # A long debounce keeps the run in observe, with the scratch file in place.
    settle = {
        r"^urgency: normal": "notify:\n  strategy: debounce\n  settle-for: 10m\nurgency: normal"
    }
    _files_monitor(work, "src/**/*.ts", settle)
    before = workspace_files(work)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "verify", "files", "--format", "json"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("[verify] trigger: pass: created"):
            break
    assert list((work / "src").glob("agentmonitors-verify-*.ts")), seen
    process.send_signal(signum)
    out, _ = process.communicate(timeout=30)

    assert process.returncode == 1
    report = json.loads(out)
    assert report["failure"]["kind"] == "setup"
    assert signum.name in report["failure"]["message"]
    assert report["stages"][3]["status"] == "pass"
    assert workspace_files(work) == before
    pid = int(re.search(r"pid (\d+)", report["stages"][0]["detail"]).group(1))  # type: ignore[union-attr]
    assert not process_alive(pid)
    socket = re.search(r"listening on (\S+)", report["daemonStderr"]).group(1)  # type: ignore[union-attr]
    assert not os.path.exists(os.path.dirname(socket))


@pytest.mark.slow
def test_a_first_observation_that_errors_fails_at_baseline(isolated_environment: Path) -> None:
    work = isolated_environment
    # Nothing listens on port 9 of the loopback: every poll errors.
    scaffold(
        work,
        "status",
        "api-poll",
        {
            r"'https://example.com/status.json'": "'http://127.0.0.1:9/'",
            r"interval: 5m": "interval: 1s",
        },
    )
    assert agentmonitors(work, "monitor", "approve", "--yes", "status").returncode == 0

    result = verify(work, "status", "--trigger-cmd", "true")

    assert result.code == 1
    assert result.report["failure"]["kind"] == "setup"
    assert result.report["failure"]["message"].startswith("the first observation failed: ")
    assert result.stage("baseline")["status"] == "fail"
    assert result.stage("trigger")["status"] == "skip"


@pytest.mark.slow
def test_manual_mode_waits_for_the_operators_change(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "notes.md").write_text("one\n")
    _files_monitor(work, "*.md")
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "verify", "--manual", "--format", "json"],
        cwd=work,
        stdin=subprocess.PIPE,  # never read: --manual must not wait on stdin
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("[verify] trigger: pass: manual"):
            break
    (work / "notes.md").write_text("two\n")
    out, _ = process.communicate(timeout=60)

    assert process.returncode == 0, out
    report = json.loads(out)
    assert report["ok"] is True
    assert f"File changed: {work / 'notes.md'}" in report["additionalContext"]


@pytest.mark.slow
def test_a_missing_literal_file_is_created_then_removed(isolated_environment: Path) -> None:
    work = isolated_environment
    _files_monitor(work, "CHANGELOG.md")

    result = verify(work, "files")

    assert result.code == 0, result.out + result.err
    assert result.stage("trigger")["detail"] == "created CHANGELOG.md"
    assert not (work / "CHANGELOG.md").exists()


@pytest.mark.slow
def test_a_daemon_that_dies_mid_run_fails_as_daemon_died(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "src").mkdir()
    (work / "src" / "main.ts").write_text("export {}\n")
    settle = {
        r"^urgency: normal": "notify:\n  strategy: debounce\n  settle-for: 10m\nurgency: normal"
    }
    _files_monitor(work, "src/**/*.ts", settle)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "verify", "files", "--format", "json"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    pid = 0
    for line in process.stderr:
        found = re.search(r"daemon: pass: a throwaway daemon, pid (\d+)", line)
        pid = int(found.group(1)) if found else pid
        if line.startswith("[verify] trigger: pass"):
            break
    os.kill(pid, signal.SIGKILL)
    out, _ = process.communicate(timeout=30)

    assert process.returncode == 1
    report = json.loads(out)
    assert report["failure"] == {"kind": "daemon-died", "message": "the daemon exited with code -9"}
    assert report["stages"][4] == {
        "name": "observe",
        "status": "fail",
        "detail": "the daemon exited with code -9",
    }
    assert "AgentMon daemon listening on" in report["daemonStderr"]
    assert not list((work / "src").glob("agentmonitors-verify-*"))

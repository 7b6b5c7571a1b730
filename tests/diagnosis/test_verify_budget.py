"""The budget ``verify`` derives from a monitor, the hard cap, and how progress shows."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentmonitors.diagnosis.verify_budget import Budget, budget_for
from agentmonitors.monitor.model import MonitorDefinition
from agentmonitors.monitor.parse import parse_monitor_file
from agentmonitors.sources.registry import load_registry
from tests.diagnosis.verify_helpers import scaffold, verify


def _monitor(tmp_path: Path, frontmatter: str) -> MonitorDefinition:
    folder = tmp_path / "monitors" / "m"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(f"---\n{frontmatter}---\n\nBody.\n")
    parsed = parse_monitor_file(str(folder / "MONITOR.md"), "project")
    assert isinstance(parsed, MonitorDefinition), parsed
    return parsed


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        # file-fingerprint without interval: I = 30 s, M = max(5 s, 7.5 s).
        ("watch:\n  type: file-fingerprint\n  globs: ['*.md']\n", Budget(30_000, 0, 0, 7_500)),
        # api-poll's default interval is five minutes.
        (
            "watch:\n  type: api-poll\n  url: 'https://example.com/'\n",
            Budget(300_000, 0, 0, 75_000),
        ),
        ("watch:\n  type: schedule\n  cron: '* * * * *'\n", Budget(60_000, 0, 0, 15_000)),
        # An explicit interval; a margin never below five seconds.
        (
            "watch:\n  type: file-fingerprint\n  globs: ['*.md']\n  interval: 4s\n",
            Budget(4_000, 0, 0, 5_000),
        ),
        # High without notify settles 15 s and confirms 15 s.
        (
            "watch:\n  type: file-fingerprint\n  globs: ['*.md']\n  interval: 40s\nurgency: high\n",
            Budget(40_000, 15_000, 15_000, 10_000),
        ),
        # A debounce settles for its settle-for; a throttle adds nothing.
        (
            "watch:\n  type: file-fingerprint\n  globs: ['*.md']\n  interval: 20s\n"
            "notify:\n  strategy: debounce\n  settle-for: 9s\n",
            Budget(20_000, 9_000, 0, 5_000),
        ),
        (
            "watch:\n  type: file-fingerprint\n  globs: ['*.md']\n  interval: 20s\n"
            "urgency: high\nnotify:\n  strategy: throttle\n  suppress-for: 1m\n",
            Budget(20_000, 0, 15_000, 5_000),
        ),
    ],
)
def test_the_budget_follows_the_documented_formulas(
    tmp_path: Path, frontmatter: str, expected: Budget
) -> None:
    assert budget_for(_monitor(tmp_path, frontmatter), load_registry()) == expected


def test_stage_allowances_combine_the_parts() -> None:
    budget = Budget(interval_ms=10_000, settle_ms=3_000, confirm_ms=15_000, margin_ms=5_000)

    assert budget.baseline_ms == 15_000
    assert budget.detect_ms == 33_000
    # Observe may run for two intervals and a margin when that is longer than detection.
    assert budget.observe_ms == 33_000
    assert Budget(60_000, 0, 0, 15_000).observe_ms == 135_000
    assert budget.deliver_ms == 23_000


@pytest.mark.slow
def test_timeout_ms_caps_the_run_after_the_trigger(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "notes.md").write_text("one\n")
    scaffold(
        work,
        "notes",
        "file-fingerprint",
        {
            r"'\*\*/\*\.ts'": "'*.md'",
            r"# interval: 30s": "interval: 1s",
            # Without the cap, a ten-minute debounce would hold observe for minutes.
            r"^urgency: normal": "notify:\n  strategy: debounce\n  settle-for: 10m\n"
            "urgency: normal",
        },
    )
    started = time.monotonic()

    result = verify(work, "notes", "--timeout-ms", "1500")

    assert time.monotonic() - started < 20
    assert result.code == 1
    assert result.report["failure"]["kind"] == "budget-exceeded"
    assert result.report["failure"]["message"].endswith("(--timeout-ms)")
    assert result.stage("observe")["status"] == "fail"
    assert "settling" in result.err
    assert not list(work.glob("agentmonitors-verify-*"))


@pytest.mark.slow
def test_a_terminal_gets_a_live_display_instead_of_plain_lines(isolated_environment: Path) -> None:
    work = isolated_environment
    (work / "a.md").write_text("x\n")
    scaffold(
        work,
        "notes",
        "file-fingerprint",
        {r"'\*\*/\*\.ts'": "'*.md'", r"# interval: 30s": "interval: 1s"},
    )
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "verify", "notes"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"},
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    out, _ = process.communicate(timeout=60)
    os.close(leader)

    assert process.returncode == 0, out
    text = shown.decode("utf-8", "replace")
    assert "[verify]" not in text
    assert "budget left" in text
    assert "elapsed" in text
    assert b"PASS  notes delivers end-to-end" in out

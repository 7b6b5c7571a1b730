from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.cli.output import dump_json, format_timestamp, resolve_format
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def make_monitor(name: str = "docs") -> None:
    folder = Path(".claude/monitors") / name
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nname: Dökümanlar\nwatch:\n  type: file-fingerprint\n  globs: ['**/*.md']\n"
        "tags: [docs]\n---\nBody\n"
    )


def test_usage_errors_exit_2_with_one_error_line(run_cli: Run) -> None:
    for args in (("validate", "--format", "xml"), ("scan", "--bogus"), ("nope",)):
        result = run_cli(*args)
        assert result.code == 2
        assert result.err.startswith("error: ")
        assert len(result.err.strip().splitlines()) == 1
        assert result.out == ""


def test_version_and_help(run_cli: Run) -> None:
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.code == 0
    assert result.out.strip() == version("agentmonitors")
    assert run_cli("--help").code == 0
    assert "validate" in run_cli().out


def test_json_keeps_non_ascii_and_two_space_indent(run_cli: Run) -> None:
    make_monitor()
    result = run_cli("scan", "--format", "json")
    assert result.code == 0
    assert "Dökümanlar" in result.out
    assert '\n  "monitors": [' in result.out
    data = result.json()
    assert data["monitors"][0]["tags"] == ["docs"]
    assert data["monitors"][0]["notify"] is None
    assert data["monitors"][0]["urgency"] == "normal"


def test_auto_format_follows_agent_environment(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_monitor()
    assert run_cli("scan").out.startswith("Monitors found:")
    monkeypatch.setenv("CLAUDECODE", "1")
    toon = run_cli("scan").out
    assert toon.startswith("monitors[1]")
    from toon_format import decode

    assert decode(toon)["monitors"][0]["id"] == "docs"
    assert run_cli("scan", "--format", "text").out.startswith("Monitors found:")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "text"),
        ({"CLAUDECODE": "1"}, "toon"),
        ({"CLAUDE_CODE_ENTRYPOINT": "cli"}, "toon"),
        ({"CURSOR_AGENT": "1"}, "toon"),
        ({"GEMINI_CLI": "1"}, "toon"),
        ({"CLAUDECODE": "0"}, "text"),
    ],
)
def test_resolve_format(env: dict[str, str], expected: str) -> None:
    assert resolve_format(None, env) == expected
    assert resolve_format("json", env) == "json"


def test_timestamps_are_utc_milliseconds() -> None:
    import datetime as dt

    moment = dt.datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert format_timestamp(moment) == "2026-03-04T03:06:07.891Z"
    assert json.loads(dump_json({"at": moment})) == {"at": "2026-03-04T03:06:07.891Z"}
    assert dump_json({"a": [1]}, compact=True) == '{"a":[1]}'


def test_errors_go_to_stdout_as_json_or_stderr_as_text(run_cli: Run) -> None:
    as_json = run_cli("scan", "missing-dir", "--format", "json")
    assert as_json.code == 1
    assert json.loads(as_json.out) == {"error": 'path "missing-dir" does not exist'}
    # The JSON object stays for scripts; the reason is on stderr under every format.
    assert as_json.err.strip() == 'error: path "missing-dir" does not exist'
    as_text = run_cli("scan", "missing-dir", "--format", "text")
    assert as_text.code == 1
    assert as_text.out == ""
    assert as_text.err.strip() == 'error: path "missing-dir" does not exist'


@pytest.mark.slow
def test_console_script_and_completion(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "agentmonitors"
    env = {**os.environ, "_AGENTMONITORS_COMPLETE": "bash_source"}
    source = subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=False)
    assert source.returncode == 0
    assert "_agentmonitors_completion" in source.stdout
    env = {
        **os.environ,
        "_AGENTMONITORS_COMPLETE": "bash_complete",
        "COMP_WORDS": "agentmonitors va",
        "COMP_CWORD": "1",
    }
    done = subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=False)
    assert "validate" in done.stdout
    bad = subprocess.run([str(exe), "scan", "--nope"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ")

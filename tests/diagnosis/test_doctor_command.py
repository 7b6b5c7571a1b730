"""``doctor``'s ``hook-command`` check finds the command the hooks run, as the host would."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.diagnosis.doctor_command import hook_command_check, slow_launcher
from tests.conftest import CliResult

PIP_BEFORE_25 = """#!/usr/bin/python3
# -*- coding: utf-8 -*-
import re
import sys
from agentmonitors.cli.main import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""
PIP_25 = """#!/usr/bin/python3
import sys
from agentmonitors.cli.main import main
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit(main())
"""


def install(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "agentmonitors"
    if isinstance(text, bytes):
        script.write_bytes(text)
    else:
        script.write_text(text)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_lean_console_script_passes_without_advisory(tmp_path: Path) -> None:
    script = install(tmp_path / "bin", PIP_25)
    check = hook_command_check(str(tmp_path / "bin"))
    assert check == {
        "name": "hook-command",
        "status": "pass",
        "detail": f"`agentmonitors` on PATH is {script}",
        "remediation": None,
    }


def test_a_script_written_by_old_pip_passes_with_the_advisory(tmp_path: Path) -> None:
    install(tmp_path / "bin", PIP_BEFORE_25)
    check = hook_command_check(str(tmp_path / "bin"))
    assert check["status"] == "pass"
    assert (
        "advisory: its console script, written by pip older than 25, imports `re`"
        in (check["detail"])
    )


@pytest.mark.parametrize(
    "text",
    [b"\x7fELF\x02\x01\x01", '#!/bin/sh\nexec python -m agentmonitors "$@"\n'],
    ids=["binary", "shell"],
)
def test_other_launchers_get_no_advisory(tmp_path: Path, text: str | bytes) -> None:
    assert not slow_launcher(str(install(tmp_path / "bin", text)))


def test_no_command_on_path_fails_naming_what_the_hooks_do(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    check = hook_command_check(str(tmp_path / "empty"))
    assert check["status"] == "fail"
    assert "every hook does nothing" in check["detail"]
    assert "uv tool install ." in check["remediation"]


def test_doctor_reports_the_command_found_on_path(
    run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_cli
    install(tmp_path / "old-pip", PIP_BEFORE_25)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "old-pip"), "/usr/bin"]))
    result = run("doctor", "--format", "json")
    report = json.loads(result.out)
    (found,) = [check for check in report["checks"] if check["name"] == "hook-command"]
    assert found["status"] == "pass" and "advisory" in found["detail"]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    result = run("doctor", "--format", "json")
    report = json.loads(result.out)
    (found,) = [check for check in report["checks"] if check["name"] == "hook-command"]
    assert found["status"] == "fail"
    assert report["ok"] is False and result.code == 1
    assert found["remediation"] in report["remediation"]

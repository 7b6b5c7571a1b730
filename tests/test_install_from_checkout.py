"""The install the README and the skill give for the plugin's hooks, done for real.

``uv tool install .`` from this checkout into a throw-away tool folder, then the plugin's
own SessionStart hook command run with only that folder (and the system's) on PATH.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentmonitors.daemon.client import DaemonError, call
from agentmonitors.workspace import read_local_state

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ["uv", "tool", "install", "."]
SYSTEM_PATH = "/usr/bin:/bin"

# pip's settings and the uv variable each one becomes, so the install resolves from the
# same indexes and trusts the same certificates as the project's own venv did.
PIP_TO_UV = {
    "index-url": "UV_DEFAULT_INDEX",
    "extra-index-url": "UV_INDEX",
    "find-links": "UV_FIND_LINKS",
    "cert": "SSL_CERT_FILE",
}


def pip_settings() -> dict[str, str]:
    """pip's effective settings: ``PIP_*`` variables over the install, then global, files."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rank = {":env:": 0, "install": 1, "global": 2}
    found: dict[str, tuple[int, str]] = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if section not in rank or not value:
            continue
        text = ast.literal_eval(value)
        if name not in found or rank[section] < found[name][0]:
            found[name] = (rank[section], str(text))
    return {name: value for name, (_, value) in found.items()}


def uv_environment(tmp_path: Path) -> dict[str, str]:
    env = {
        "PATH": SYSTEM_PATH,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "home" / ".local" / "share"),
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        # Reused across runs (it is git-ignored): a warm cache installs in about a second.
        "UV_CACHE_DIR": str(ROOT / ".cache" / "uv"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
        # pip weighs every index equally; uv would otherwise stop at the first one that
        # knows a package, even without the version needed.
        "UV_INDEX_STRATEGY": "unsafe-best-match",
    }
    for name, value in pip_settings().items():
        if name in PIP_TO_UV:
            separator = "," if name == "find-links" else " "
            env[PIP_TO_UV[name]] = separator.join(value.split())
    return env


def session_start_hook() -> str:
    groups = json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    command = groups["SessionStart"][0]["hooks"][0]["command"]
    assert isinstance(command, str)
    return command


def user_env(bin_dir: Path, home: Path) -> dict[str, str]:
    """A user's shell with the tool's bin folder on PATH and nothing of this test's venv."""
    return {
        "PATH": f"{bin_dir}:{SYSTEM_PATH}",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }


def run_hook(
    command: str, payload: dict[str, object], bin_dir: Path, home: Path
) -> tuple[int, str, str]:
    """A hook command as Claude Code runs it: ``sh -c``, the payload on stdin."""
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=payload["cwd"],
        env=user_env(bin_dir, home),
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_the_documented_install_is_the_one_tested() -> None:
    """README and skill give ``uv tool install .`` from a checkout, and no index release."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    skill = (ROOT / "skills" / "setup-monitors" / "SKILL.md").read_text(encoding="utf-8")
    hooks = (ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8")
    for name, text in (("README.md", readme), ("SKILL.md", skill), ("hooks.json", hooks)):
        assert " ".join(INSTALL) in text, name
        # Not published on a package index: naming it there would install something else.
        for claim in ("pipx install agentmonitors", "pip install agentmonitors"):
            assert claim not in text, f"{name}: {claim}"


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_uv_tool_install_from_the_checkout_serves_the_plugin_hooks(tmp_path: Path) -> None:
    env = uv_environment(tmp_path)
    home = Path(env["HOME"])
    home.mkdir(exist_ok=True)  # the autouse isolated_environment made it
    from uv import find_uv_bin

    installed = subprocess.run(
        [find_uv_bin(), *INSTALL[1:], "--python", sys.executable],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    bin_dir = Path(env["UV_TOOL_BIN_DIR"])
    cli = bin_dir / "agentmonitors"
    # The tool's own environment, not this test's venv.
    assert Path(os.path.realpath(cli)).is_relative_to(Path(env["UV_TOOL_DIR"]).resolve())
    version = subprocess.run(
        [cli, "--version"], capture_output=True, text=True, env={"PATH": SYSTEM_PATH}, check=False
    )
    assert (version.returncode, version.stdout.strip()) == (
        0,
        importlib.metadata.version("agentmonitors"),
    )

    # A folder that is not enabled: the plugin's hook runs the CLI, which stays silent.
    plain = tmp_path / "plain"
    plain.mkdir()
    payload = {
        "session_id": "9b2e4c1a-7d3f-4e5b-8a6c-0f1e2d3c4b5a",
        "transcript_path": str(home / ".claude" / "projects" / "p" / "9b2e4c1a.jsonl"),
        "cwd": str(plain),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook(session_start_hook(), payload, bin_dir, home) == (0, "", "")
    assert list(plain.iterdir()) == []

    # An enabled project: the same hook boots the daemon from the installed tool and
    # registers the session.
    project = tmp_path / "project"
    project.mkdir()
    enabled = subprocess.run(
        [cli, "init"],
        cwd=project,
        env=user_env(bin_dir, home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert enabled.returncode == 0, enabled.stderr
    code, out, err = run_hook(session_start_hook(), {**payload, "cwd": str(project)}, bin_dir, home)
    socket = read_local_state(str(project)).socket
    try:
        assert (code, out) == (0, ""), err
        assert socket is not None
        assert err.startswith("AgentMon: session "), err
        assert err.strip().endswith(f"registered; daemon at {socket}")
        sessions = call(socket, "session.list", {})
        assert [s["hostSessionId"] for s in sessions] == [payload["session_id"]]
    finally:
        if socket is not None:
            with contextlib.suppress(DaemonError):
                call(socket, "stop", {})

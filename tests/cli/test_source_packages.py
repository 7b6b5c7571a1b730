"""``source install|update|remove|search`` with real pip, in a throwaway environment.

A fresh venv (no pip of its own) runs agentmonitors with this environment's packages on
``PYTHONPATH``, so pip installs into the throwaway venv and the test environment never
changes. Wheels are built by hand and found through ``--find-links``: no index, no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fixtures.example_source.wheel import build_wheel

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"


class Env:
    def __init__(self, root: Path, wheels: Path) -> None:
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        self.python = str(venv / "bin" / "python")
        here = sysconfig.get_paths()["purelib"]
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(SRC), here]),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheels),
        }
        self.cwd = root

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "-m", "agentmonitors", "source", *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.cwd,
            timeout=120,
            check=False,
        )

    def sources(self) -> list[str]:
        listed = self.run("list", "--format", "json")
        assert listed.returncode == 0, listed.stderr
        return [entry["name"] for entry in json.loads(listed.stdout)]


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path, tmp_path / "wheels")


def test_install_search_update_remove(env: Env, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    first = build_wheel(wheels, version="0.1.0")
    assert "example-echo" not in env.sources()

    installed = env.run("install", str(first))
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout == ("Added source example-echo (agentmonitors-example-source 0.1.0)\n")
    # pip's own chatter stays out of a successful run unless asked for.
    assert installed.stderr == ""
    assert "example-echo" in env.sources()

    found = env.run("search", "echo", "--format", "json")
    assert [(e["name"], e["origin"]) for e in json.loads(found.stdout)] == [
        ("example-echo", "agentmonitors-example-source 0.1.0")
    ]
    bundled = env.run("search", "cron", "--format", "text")
    assert bundled.stdout.startswith("schedule (bundled): ")

    again_verbose = env.run("install", "--verbose", str(first))
    assert again_verbose.returncode == 0
    # pip runs in a folder of ours: the path it reports is the absolute one.
    assert f"Processing {wheels}/agentmonitors_example_source-0.1.0" in again_verbose.stderr
    assert again_verbose.stdout == "No source was added.\n"

    build_wheel(wheels, version="0.2.0")
    updated = env.run("update", "example-echo", "--format", "json")
    assert updated.returncode == 0, updated.stderr
    assert json.loads(updated.stdout)["upgraded"] == [
        {
            "name": "example-echo",
            "distribution": "agentmonitors-example-source",
            "version": "0.2.0",
            "previousVersion": "0.1.0",
        }
    ]
    again = env.run("update")  # everything, and nothing newer is there
    assert again.returncode == 0 and again.stdout == "No source was updated.\n"

    removed = env.run("remove", "example-echo")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == "Removed source example-echo (agentmonitors-example-source 0.2.0)\n"
    assert "example-echo" not in env.sources()


def test_bad_requests_say_why(env: Env, tmp_path: Path) -> None:
    bundled = env.run("remove", "file-fingerprint")
    assert bundled.returncode == 1
    assert '"file-fingerprint" is bundled with agentmonitors' in bundled.stderr
    unknown = env.run("update", "no-such-source")
    assert unknown.returncode == 1
    assert 'No installed plugin provides source "no-such-source"' in unknown.stderr
    usage = env.run("install")
    assert usage.returncode == 2 and "Missing argument 'REQUIREMENTS...'" in usage.stderr

    missing = env.run("install", "agentmonitors-no-such-package")
    assert missing.returncode == 1
    # One line that says what pip said, not pip's whole log.
    assert missing.stderr.startswith("error: pip install failed (exit code 1): ")
    assert "agentmonitors-no-such-package" in missing.stderr
    assert "--verbose" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    loud = env.run("install", "-v", "agentmonitors-no-such-package")
    assert loud.returncode == 1
    assert "Looking in links" in loud.stderr
    assert loud.stderr.strip().splitlines()[-1] == (
        "error: pip install failed (exit code 1): see its output above."
    )

    not_a_source = build_wheel(tmp_path / "wheels", distribution="plain-package", points={})
    plain = env.run("install", str(not_a_source))
    assert plain.returncode == 1
    assert plain.stderr.startswith(
        "error: plain-package installed, but declares no agentmonitors.sources entry point"
    )
    assert env.run("update").stdout == "No plugin sources are installed; nothing to update.\n"


def test_install_from_a_hostile_repository_runs_nothing_of_it(env: Env, tmp_path: Path) -> None:
    """pip and the plugin lookup never import from the folder ``source install`` runs in."""
    wheel = build_wheel(tmp_path / "wheels", version="0.1.0")
    repo = tmp_path / "repo"
    markers = tmp_path / "markers"
    markers.mkdir()
    marking = "open({!r}, 'a').close()\n"
    (repo / "pip").mkdir(parents=True)
    (repo / "pip" / "__init__.py").write_text(marking.format(str(markers / "pip")))
    (repo / "evil_source.py").write_text(marking.format(str(markers / "evil_source")))
    dist_info = repo / "evil-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[agentmonitors.sources]\nevil = evil_source:Source\n"
    )
    env.cwd = repo
    # A requirement naming a path is read from where the user ran the command.
    installed = env.run("install", os.path.relpath(wheel, repo))
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout == "Added source example-echo (agentmonitors-example-source 0.1.0)\n"
    assert "example-echo" in env.sources() and "evil" not in env.sources()
    removed = env.run("remove", "example-echo")
    assert removed.returncode == 0, removed.stderr
    assert sorted(path.name for path in markers.iterdir()) == []

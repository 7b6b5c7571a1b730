"""Third-party sources: discovery through the ``agentmonitors.sources`` entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.sources.plugins import plugin_entry_points
from agentmonitors.sources.registry import (
    BUNDLED_SOURCE_NAMES,
    bundled_registry,
    load_registry,
)
from tests.conftest import CliResult
from tests.fixtures.example_source.install import install_example, write_dist_info

Run = Callable[..., CliResult]

ECHO = """---
name: Echo
watch:
  type: example-echo
  message: hello from a plugin
---
Say hello back.
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example distribution, installed onto ``sys.path`` for this test only."""
    folder = install_example(tmp_path / "site")
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [name for name in sys.modules if name.startswith("agentmonitors_example")]:
        del sys.modules[name]


@pytest.fixture
def bad_plugins(site: Path) -> Path:
    """A second distribution whose plugins are broken or collide."""
    write_dist_info(
        site,
        "zz-bad-plugins",
        "1.0",
        {
            "raises": "agentmonitors_example:broken_factory",
            "missing": "agentmonitors_no_such_module:Source",
            "impostor": "agentmonitors_example:Impostor",
            "echo-again": "agentmonitors_example:EchoSource",
            "not-a-source": "agentmonitors_example:GROUP_DOES_NOT_EXIST",
        },
    )
    return site


def test_without_plugins_the_registry_is_the_bundled_five() -> None:
    problems: list[str] = []
    registry = load_registry(problems.append, points=[])
    assert registry.names() == list(BUNDLED_SOURCE_NAMES)
    assert problems == []


def test_an_installed_plugin_loads_after_the_bundled_sources(site: Path) -> None:
    assert [point.name for point in plugin_entry_points()] == ["example-echo"]
    problems: list[str] = []
    registry = load_registry(problems.append)
    assert registry.names() == [*BUNDLED_SOURCE_NAMES, "example-echo"]
    assert problems == []
    schema = registry.get("example-echo").scope_schema  # type: ignore[union-attr]
    assert schema["required"] == ["message"]
    assert bundled_registry().names() == list(BUNDLED_SOURCE_NAMES)


def test_broken_and_colliding_plugins_are_reported_not_fatal(bad_plugins: Path) -> None:
    problems: list[str] = []
    registry = load_registry(problems.append)
    assert registry.names() == [*BUNDLED_SOURCE_NAMES, "example-echo"]
    by_name = {problem.split('"')[1]: problem for problem in problems}
    assert set(by_name) == {"raises", "missing", "impostor", "echo-again", "not-a-source"}
    assert "RuntimeError: example plugin could not start" in by_name["raises"]
    assert "ModuleNotFoundError" in by_name["missing"]
    assert 'Observation source "file-fingerprint" is already registered' in by_name["impostor"]
    assert 'Observation source "example-echo" is already registered' in by_name["echo-again"]
    assert "failed to load" in by_name["not-a-source"]
    # The bundled source wins over the impostor.
    assert type(registry.get("file-fingerprint")).__name__ == "FileFingerprintSource"


def test_a_plugin_that_is_not_a_source_is_reported(site: Path) -> None:
    write_dist_info(site, "odd", "1.0", {"odd": "agentmonitors_example.install_notes:x"})
    (site / "agentmonitors_example" / "install_notes.py").write_text("x = 42\n")
    problems: list[str] = []
    registry = load_registry(problems.append)
    assert problems == []  # plugins are looked up on first need, not up front
    assert registry.names() == [*BUNDLED_SOURCE_NAMES, "example-echo"]
    assert len(problems) == 1
    assert "kebab-case" in problems[0]


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def workspace(isolated_environment: Path) -> Path:
    folder = isolated_environment / ".claude" / "monitors" / "echo"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(ECHO)
    return isolated_environment


def test_validate_schema_and_source_list_include_the_plugin(
    site: Path, workspace: Path, run_cli: Run
) -> None:
    validated = run_cli("validate", "--format", "json")
    assert validated.code == 0, validated.out + validated.err
    assert validated.json()["monitors"][0]["source"] == "example-echo"

    schema = run_cli("schema", "generate").json()
    assert "example-echo" in schema["properties"]["watch"]["properties"]["type"]["enum"]
    echo_rule = next(
        rule
        for rule in schema["allOf"]
        if rule["if"]["properties"]["watch"]["properties"]["type"]["const"] == "example-echo"
    )
    assert echo_rule["then"]["properties"]["watch"]["required"] == ["message"]

    listed = run_cli("source", "list", "--format", "json").json()
    echo = next(entry for entry in listed if entry["name"] == "example-echo")
    assert echo["configFields"] == ["message", "warning"]
    assert echo["required"] == ["message"]
    assert echo["fieldDescriptions"]["message"] == "The title of every observation."


def test_validate_checks_a_plugin_config(site: Path, workspace: Path, run_cli: Run) -> None:
    bad = workspace / ".claude" / "monitors" / "echo" / "MONITOR.md"
    bad.write_text("---\nwatch:\n  type: example-echo\n---\nx\n")
    result = run_cli("validate", "--format", "json")
    assert result.code == 1
    (error,) = result.json()["errors"]
    assert "message" in error["error"]


def test_a_broken_plugin_is_a_warning_on_the_cli(
    bad_plugins: Path, workspace: Path, run_cli: Run
) -> None:
    result = run_cli("validate")
    assert result.code == 0
    assert "Valid monitors: 1" in result.out
    assert 'Warning: Source plugin "raises"' in result.err
    assert 'Warning: Source plugin "impostor"' in result.err


def test_without_the_plugin_its_monitors_are_unknown(workspace: Path, run_cli: Run) -> None:
    result = run_cli("validate", "--format", "json")
    assert result.code == 1
    assert 'Unknown source "example-echo"' in result.json()["errors"][0]["error"]


@pytest.mark.slow
def test_the_daemon_runs_a_plugin_source(tmp_path: Path, workspace: Path) -> None:
    site = install_example(tmp_path / "subprocess-site")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PWD": str(workspace),
    }
    result = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "daemon", "once", "--format", "json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["evaluatedMonitors"] == ["echo"]
    assert report["erroredObservations"] == []
    assert len(report["emittedEventIds"]) == 1

    history = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "monitor", "history", "echo", "--format", "json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    rows = json.loads(history.stdout)
    assert [row["result"] for row in rows] == ["triggered"]

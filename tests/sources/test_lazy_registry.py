"""The registry loads what is asked for: a bundled source on first use, plugins on need.

A command whose monitors use one bundled source must not pay for the others (api-poll
brings an HTTP client) nor for reading every installed distribution's entry points;
asking for every source still lists them all, in the same order, under the same rules.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from agentmonitors.sources.api_poll import ApiPollSource
from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.observation import ObservationContext
from agentmonitors.sources.plugins import ENTRY_POINT_GROUP
from agentmonitors.sources.registry import (
    BUNDLED_SOURCE_NAMES,
    bundled_registry,
    load_registry,
)

HERE = __name__


class Impostor(ApiPollSource):
    """A plugin that claims a bundled source's name."""


class Extra(FileFingerprintSource):
    name = "extra-files"


class Points:
    """Entry points that record whether anyone looked at them."""

    def __init__(self, *points: EntryPoint) -> None:
        self.points = points
        self.scans = 0

    def __iter__(self) -> Iterator[EntryPoint]:
        self.scans += 1
        return iter(self.points)


def point(name: str, attribute: str) -> EntryPoint:
    return EntryPoint(name=name, value=f"{HERE}:{attribute}", group=ENTRY_POINT_GROUP)


def test_a_bundled_source_is_had_without_looking_for_plugins() -> None:
    points = Points(point("extra-files", "Extra"))
    problems: list[str] = []
    registry = load_registry(problems.append, points)
    assert isinstance(registry.get("file-fingerprint"), FileFingerprintSource)
    assert registry.has("api-poll")
    assert registry.traits("file-fingerprint").stateful is True
    assert points.scans == 0

    # A name that is not bundled, then the full list: the plugins are read once.
    assert isinstance(registry.get("extra-files"), Extra)
    assert registry.names() == [*BUNDLED_SOURCE_NAMES, "extra-files"]
    assert [source.name for source in registry.list()] == registry.names()
    assert points.scans == 1
    assert problems == []


def test_a_plugin_never_shadows_a_bundled_source_not_yet_loaded() -> None:
    problems: list[str] = []
    registry = load_registry(problems.append, Points(point("impostor", "Impostor")))
    # Nothing bundled has been loaded when the plugins are read.
    assert registry.names() == list(BUNDLED_SOURCE_NAMES)
    assert len(problems) == 1
    assert 'Source plugin "impostor"' in problems[0]
    assert 'Observation source "api-poll" is already registered' in problems[0]
    assert type(registry.get("api-poll")) is ApiPollSource


def test_an_unknown_name_looks_at_the_plugins_once() -> None:
    points = Points()
    registry = load_registry(lambda line: None, points)
    assert registry.get("no-such-source") is None
    assert not registry.has("no-such-source")
    assert registry.traits("no-such-source").default_interval_ms > 0
    assert points.scans == 1


def test_a_vanished_source_fails_naming_itself() -> None:
    """A monitor whose source was uninstalled or renamed fails with that source's name."""
    registry = load_registry(lambda line: None, Points())
    traits = registry.traits("gone-source")
    assert traits.name == "gone-source"
    with pytest.raises(RuntimeError, match=r'^source "gone-source" cannot observe$'):
        asyncio.run(traits.observe({}, ObservationContext(None, 0, "/tmp", "m")))
    with pytest.raises(RuntimeError, match=r'^source "gone-source" cannot observe in place$'):
        traits.observe_blocking({}, ObservationContext(None, 0, "/tmp", "m"))
    # Other names keep their own.
    assert registry.traits("other-source").name == "other-source"
    assert registry.traits("file-fingerprint").name == "file-fingerprint"


def test_registration_order_follows_the_bundled_table_whatever_loads_first() -> None:
    registry = bundled_registry()
    for name in reversed(BUNDLED_SOURCE_NAMES):
        source = registry.get(name)
        # The table names each source by the name the source itself declares.
        assert source is not None and source.name == name
    assert registry.names() == list(BUNDLED_SOURCE_NAMES)
    assert registry.get("file-fingerprint") is registry.get("file-fingerprint")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Impostor())


THREE_FILE_MONITORS = {
    "notes": "notes/*.md",
    "docs": "docs/**/*.md",
    "cfg": "*.toml",
}

# What validating or ticking file-fingerprint monitors must not import.
UNUSED = (
    "agentmonitors.sources.api_poll",
    "agentmonitors.sources.command_poll",
    "agentmonitors.sources.schedule",
    "agentmonitors.sources.incoming_changes",
    "httpx",
)


# Runs the real entry point in a fresh interpreter, then lists what it imported.
DRIVER = """
import json, sys
from agentmonitors.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def imported_by(args: list[str], cwd: Path) -> set[str]:
    """The modules a real ``agentmonitors`` command imports, run in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *args],
        cwd=cwd,
        env={**os.environ, "PWD": str(cwd)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stdout + done.stderr
    return set(report["modules"])


@pytest.mark.slow
def test_validate_and_daemon_once_of_file_monitors_import_no_other_source(
    isolated_environment: Path,
) -> None:
    for monitor_id, glob in THREE_FILE_MONITORS.items():
        folder = isolated_environment / ".claude" / "monitors" / monitor_id
        folder.mkdir(parents=True)
        (folder / "MONITOR.md").write_text(
            f"---\nwatch:\n  type: file-fingerprint\n  globs: '{glob}'\n---\nReact.\n"
        )
    (isolated_environment / "notes").mkdir()
    (isolated_environment / "notes" / "a.md").write_text("a\n")

    validated = imported_by(["validate", ".claude/monitors"], isolated_environment)
    assert "agentmonitors.sources.file_fingerprint" in validated
    assert validated.isdisjoint(UNUSED), validated & set(UNUSED)
    # validate never observes, so it does not need an event loop either.
    assert "asyncio" not in validated

    ticked = imported_by(["daemon", "once"], isolated_environment)
    assert "agentmonitors.sources.file_fingerprint" in ticked
    assert ticked.isdisjoint(UNUSED), ticked & set(UNUSED)

"""A misspelt watch-scope key or ``type:`` gets the close name, in ``validate`` and
``watch declare`` alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.hostile import add_monitor, agentmonitors

INCOMING = """---
watch:
  type: incoming-changes
  pathz: ["src"]
---
Look at what came in.
"""

FILES = """---
watch:
  type: file-fingerprint
  glob: "*.txt"
---
Read the notes.
"""

TYPO_TYPE = """---
watch:
  type: comand-poll
  command: ["true"]
---
Run it.
"""


def test_validate_names_the_key_and_the_type_meant(isolated_environment: Path) -> None:
    work = isolated_environment
    add_monitor(work, "incoming", INCOMING)
    add_monitor(work, "notes", FILES)
    add_monitor(work, "runner", TYPO_TYPE)

    done = agentmonitors(work, "validate", "--format", "json")

    assert done.returncode == 1
    # ``filePath`` holds the monitor id (docs/compatibility.md); a clearer name may join it.
    errors = {
        item.get("monitorId") or item["filePath"]: item["error"]
        for item in json.loads(done.stdout)["errors"]
    }
    # The error itself (what makes the monitor invalid) names the key meant.
    assert errors["incoming"].startswith("watch.paths: is required")
    assert 'did you mean "paths"?' in errors["incoming"]
    assert '"pathz"' in errors["incoming"]
    assert 'did you mean "globs"?' in errors["notes"]
    assert errors["runner"].startswith('Unknown source "comand-poll". Did you mean "command-poll"?')


@pytest.fixture
def lead(isolated_environment: Path) -> Iterator[str]:
    work = isolated_environment
    assert agentmonitors(work, "init", "--enable-only").returncode == 0
    assert agentmonitors(work, "daemon", "start").returncode == 0
    opened = agentmonitors(
        work, "session", "open", "--host-session-id", "host-typo", "--format", "json"
    )
    assert opened.returncode == 0, opened.stderr
    yield str(json.loads(opened.stdout)["id"])
    agentmonitors(work, "daemon", "stop")


@pytest.mark.slow
def test_watch_declare_names_the_key_and_the_source_meant(
    isolated_environment: Path, lead: str
) -> None:
    work = isolated_environment

    key = agentmonitors(
        work, "watch", "declare", "incoming-changes", "--session", lead, "--scope", "pathz=src"
    )
    assert key.returncode == 1
    assert 'did you mean "paths"?' in key.stderr, key.stderr

    source = agentmonitors(
        work, "watch", "declare", "comand-poll", "--session", lead, "--scope", "command=true"
    )
    assert source.returncode == 1
    assert 'Did you mean "command-poll"?' in source.stderr, source.stderr

"""The compiled-definition cache: an unchanged MONITOR.md is read back, never stale."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.catalog import compiled
from agentmonitors.catalog.compiled import CompiledDefinitions, cache_dir, fingerprint_of
from agentmonitors.catalog.definitions import DefinitionCache
from agentmonitors.monitor.parse import ParseFailure, parse_monitor_file
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.registry import load_registry
from tests.conftest import CliResult
from tests.fixtures.example_source.install import install_example

Run = Callable[..., CliResult]

VALID = """---
name: Docs watch
watch:
  type: file-fingerprint
  globs: ["docs/**/*.md"]
  interval: 1m
urgency: normal..high
notify:
  strategy: rollup
  window: "0 17 * * 1-5"
  timezone: Europe/Paris
baseline-strategy: incremental
shape:
  derive:
    - name: past-due
      when: due < now
  render: rendered
payload:
  form: structured
  transform:
    language: jq
    expression: ".sets"
  encoding: toon
tags: [docs, team-a]
---
# When the docs change

Summarise it.
"""
# Line numbers in the errors: a bad interval in the watch block and a bad notify.
INVALID = """---
watch:
  type: file-fingerprint
  globs: ["src/**"]
  interval: soon
notify:
  strategy: debounce
---
Body.
"""
# Unknown keys at the top and inside the watch block: warnings with their lines.
WARNED = """---
watch:
  type: schedule
  cron: "0 9 * * 1-5"
  timezon: UTC
urgnecy: high
---
Body.
"""
UNKNOWN_SOURCE = """---
watch:
  type: no-such-source
  anything: 1
---
Body.
"""
PLUGIN = """---
watch:
  type: example-echo
  mesage: hi
---
Body.
"""
PLUGIN_VALID = """---
watch:
  type: example-echo
  message: hi
  colour: blue
---
Body.
"""


def write(root: Path, monitor_id: str, content: str) -> Path:
    path = root / monitor_id / "MONITOR.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8", newline="")
    return path


def entries() -> list[Path]:
    folder = Path(cache_dir())
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def tamper_body(entry: Path, body: str) -> None:
    """Change what an entry says the body is, keeping its key: only a read of the entry
    can produce this body, so it proves a hit."""
    data = json.loads(entry.read_text())
    data["outcome"]["body"] = body
    entry.write_text(json.dumps(data))


@pytest.fixture
def monitors(isolated_environment: Path) -> Path:
    root = isolated_environment / ".claude" / "monitors"
    root.mkdir(parents=True)
    return root


def test_a_miss_parses_and_stores_and_a_hit_reads_the_same_definition(monitors: Path) -> None:
    path = write(monitors, "docs", VALID)
    first = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert isinstance(first, MonitorDefinition)
    [entry] = entries()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700

    again = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert again == first == parse_monitor_file(str(path), "project")
    assert again.frontmatter == first.frontmatter
    assert again.notify_as_authored() == {
        "strategy": "rollup",
        "window": "0 17 * * 1-5",
        "timezone": "Europe/Paris",
    }
    assert again.frontmatter.shape is not None
    assert again.frontmatter.shape.as_authored() == {
        "derive": [{"name": "past-due", "when": "due < now"}],
        "render": "rendered",
    }
    # The line lookup kept in the entry answers as the YAML's did.
    assert first.lines is not None and again.lines is not None
    for key in [("watch", "interval"), ("shape", "derive", 0, "when"), ("tags", 1), ("nope",)]:
        assert again.lines(key) == first.lines(key), key
    assert again.lines(("watch", "missing")) == first.lines(("watch",)) == 3

    tamper_body(entry, "from the cache\n")
    hit = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert isinstance(hit, MonitorDefinition)
    assert hit.body == "from the cache\n"
    # Another scope is another entry.
    other = CompiledDefinitions(load_registry()).parse(str(path), "user")
    assert isinstance(other, MonitorDefinition) and other.body == first.body
    assert len(entries()) == 2


def test_an_edit_with_the_same_size_and_mtime_is_seen(monitors: Path) -> None:
    path = write(monitors, "docs", VALID)
    CompiledDefinitions(load_registry()).parse(str(path), "project")
    before = path.stat()
    edited = VALID.replace("Summarise it.", "Summarize it.")
    assert len(edited) == len(VALID)
    path.write_text(edited, encoding="utf-8", newline="")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert path.stat().st_size == before.st_size

    parsed = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert isinstance(parsed, MonitorDefinition)
    assert parsed.body.endswith("Summarize it.\n")


def test_another_code_fingerprint_is_a_miss(monitors: Path) -> None:
    path = write(monitors, "docs", VALID)
    CompiledDefinitions(load_registry(), fingerprint="one").parse(str(path), "project")
    [entry] = entries()
    tamper_body(entry, "stale\n")
    same = CompiledDefinitions(load_registry(), fingerprint="one").parse(str(path), "project")
    assert isinstance(same, MonitorDefinition) and same.body == "stale\n"
    changed = CompiledDefinitions(load_registry(), fingerprint="two").parse(str(path), "project")
    assert isinstance(changed, MonitorDefinition)
    assert changed.body == "# When the docs change\n\nSummarise it.\n"


def test_the_fingerprint_follows_the_deciding_modules(tmp_path: Path) -> None:
    package = tmp_path / "agentmonitors"
    for name in ("monitor/model.py", "sources/base.py", "catalog/validation.py", "cli/app.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("x = 1\n")
    first = fingerprint_of(str(package))
    assert fingerprint_of(str(package)) == first
    # A module that does not decide parsing or checking changes nothing.
    (package / "cli" / "app.py").write_text("x = 22\n")
    assert fingerprint_of(str(package)) == first
    info = (package / "sources" / "base.py").stat()
    os.utime(package / "sources" / "base.py", ns=(info.st_atime_ns, info.st_mtime_ns + 1))
    touched = fingerprint_of(str(package))
    assert touched != first
    (package / "monitor" / "policy.py").write_text("")
    assert fingerprint_of(str(package)) != touched


def test_a_corrupt_entry_is_ignored_and_rewritten(monitors: Path) -> None:
    path = write(monitors, "docs", VALID)
    expected = CompiledDefinitions(load_registry()).parse(str(path), "project")
    [entry] = entries()
    for damage in ["{not json", json.dumps({"key": "x"}), ""]:
        entry.write_text(damage)
        assert CompiledDefinitions(load_registry()).parse(str(path), "project") == expected
        assert json.loads(entry.read_text())["outcome"]["kind"] == "definition"
    data = json.loads(entry.read_text())
    data["outcome"]["policy"] = {"watch": "not a mapping"}
    entry.write_text(json.dumps(data))
    assert CompiledDefinitions(load_registry()).parse(str(path), "project") == expected


def test_the_variable_turns_the_cache_off(monitors: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(monitors, "docs", VALID)
    monkeypatch.setenv("AGENTMONITORS_NO_CACHE", "1")
    parsed = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert isinstance(parsed, MonitorDefinition)
    assert entries() == []
    assert not Path(cache_dir()).exists()


def test_failures_and_their_checks_are_stored_too(monitors: Path) -> None:
    path = write(monitors, "bad", INVALID)
    cold = CompiledDefinitions(load_registry())
    failure = cold.parse(str(path), None)
    assert isinstance(failure, ParseFailure)
    checks = cold.checks(failure)
    [entry] = entries()
    stored = json.loads(entry.read_text())
    assert stored["outcome"]["kind"] == "failure"
    assert stored["checks"] == {"errors": checks[0], "warnings": checks[1]}
    assert "line 5" in failure.error
    warm = CompiledDefinitions(load_registry())
    again = warm.parse(str(path), None)
    assert again == failure and again.watch_raw == failure.watch_raw
    assert warm.checks(again) == checks


def test_vanished_files_entries_are_pruned_past_the_cap(
    monitors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled, "MAX_ENTRIES", 2)
    cache = CompiledDefinitions(load_registry())
    paths = [write(monitors, f"m{index}", VALID) for index in range(2)]
    for path in paths:
        cache.parse(str(path), "project")
    assert len(entries()) == 2
    paths[0].unlink()
    cache.parse(str(write(monitors, "m2", VALID)), "project")
    kept = {json.loads(entry.read_text())["key"]["path"] for entry in entries()}
    assert kept == {str(monitors / "m1" / "MONITOR.md"), str(monitors / "m2" / "MONITOR.md")}
    cache.parse(str(write(monitors, "m3", VALID)), "project")
    assert len(entries()) == 2


def test_the_daemon_loader_reads_through_the_cache(
    monitors: Path, isolated_environment: Path
) -> None:
    path = write(monitors, "docs", VALID)
    first = DefinitionCache(load_registry()).load(str(isolated_environment), None)
    assert [monitor.id for monitor in first.runnable] == ["docs"]
    [entry] = entries()
    tamper_body(entry, "from the cache\n")
    second = DefinitionCache(load_registry()).load(str(isolated_environment), None)
    assert [monitor.body for monitor in second.runnable] == ["from the cache\n"]
    assert path.exists()


# --------------------------------------------------------------------------- validate


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = install_example(tmp_path / "site")
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [name for name in sys.modules if name.startswith("agentmonitors_example")]:
        del sys.modules[name]


def test_validate_prints_the_same_bytes_hit_or_miss(
    monitors: Path, plugin_site: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    for monitor_id, content in [
        ("docs", VALID),
        ("bad", INVALID),
        ("warned", WARNED),
        ("unknown", UNKNOWN_SOURCE),
        ("plugin", PLUGIN),
        ("plugin-ok", PLUGIN_VALID),
    ]:
        write(monitors, monitor_id, content)
    runs = [("validate",), ("validate", "--format", "json"), ("validate", str(monitors))]

    def outputs() -> list[tuple[int, str, str]]:
        return [(result.code, result.out, result.err) for result in (run_cli(*a) for a in runs)]

    cold = outputs()
    stored = {
        data["outcome"]["id"]: data["checks"]
        for data in (json.loads(entry.read_text()) for entry in entries())
    }
    assert set(stored) == {"docs", "bad", "warned", "unknown", "plugin", "plugin-ok"}
    # Only a bundled source's checks are kept: a plugin's code is not fingerprinted, and
    # an unknown source's message lists whatever plugins are installed.
    assert [stored[name] for name in ("unknown", "plugin", "plugin-ok")] == [None, None, None]
    assert all(stored[name] is not None for name in ("docs", "bad", "warned"))
    warm = outputs()
    monkeypatch.setenv("AGENTMONITORS_NO_CACHE", "1")
    uncached = outputs()
    assert warm == cold == uncached
    text = cold[0][1]
    assert "Invalid monitors: 3" in text
    assert '"soon", line 5)' in text  # the interval, from a stored failure
    assert 'Unknown source "no-such-source"' in text
    report = json.loads(cold[1][1])
    warnings = "\n".join(item["warning"] for item in report["warnings"])
    assert "urgnecy" in warnings and "timezon" in warnings and "colour" in warnings
    # The plugin's checks ran again on the hit, with the stored line lookup.
    plugin_error = next(item["error"] for item in report["errors"] if item["filePath"] == "plugin")
    assert plugin_error == (
        'watch.message: is required; "mesage" is no key of this source: did you mean'
        ' "message"? (line 2)'
    )


def test_a_hit_imports_neither_pydantic_nor_the_yaml_parser(
    monitors: Path, isolated_environment: Path, run_cli: Run
) -> None:
    write(monitors, "docs", VALID)
    write(monitors, "bad", INVALID)
    write(monitors, "warned", WARNED)
    assert run_cli("validate").code == 1  # warms the cache
    code = (
        "import sys\n"
        "from agentmonitors.cli.main import main\n"
        "from agentmonitors.catalog.definitions import DefinitionCache\n"
        "from agentmonitors.sources.registry import load_registry\n"
        "code = main(['validate'])\n"
        "loaded = DefinitionCache(load_registry()).load(sys.argv[1], None)\n"
        "assert [m.id for m in loaded.runnable] == ['docs', 'warned'], loaded\n"
        "heavy = sorted(name for name in sys.modules if name.split('.')[0] in "
        "('pydantic', 'pydantic_core', 'ruamel'))\n"
        "print('HEAVY', heavy, code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(isolated_environment)],
        capture_output=True,
        text=True,
        check=True,
        cwd=isolated_environment,
    )
    assert "HEAVY [] 1" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize(
    "watch",
    [
        "  type: api-poll\n  url: https://user:s3cretpw@example.test/x\n",
        "  type: api-poll\n  url: https://example.test/x\n  auth:\n"
        "    type: basic\n    username: u\n    password: s3cretpw\n",
        "  type: api-poll\n  url: https://example.test/x\n  headers:\n    X-Api-Key: s3cretpw\n",
        '  type: command-poll\n  command: ["gh", "pr", "list"]\n  env:\n'
        "    GITHUB_TOKEN: s3cretpw\n",
    ],
)
def test_a_definition_holding_a_credential_is_never_stored(monitors: Path, watch: str) -> None:
    """The secret stays in the one file its author put it in; an entry written for the
    file before it held one goes."""
    plain = "---\nwatch:\n  type: api-poll\n  url: https://example.test/x\n---\nBody.\n"
    path = write(monitors, "status", plain)
    CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert len(entries()) == 1

    path.write_text(f"---\nwatch:\n{watch}---\nBody.\n", encoding="utf-8")
    outcome = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert isinstance(outcome, MonitorDefinition)
    assert "s3cretpw" in json.dumps(outcome.watch_raw)  # the daemon runs the real thing
    assert entries() == []
    again = CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert again == outcome
    assert entries() == []


def test_a_variable_name_is_not_a_credential(monitors: Path) -> None:
    text = (
        "---\nwatch:\n  type: api-poll\n  url: https://example.test/x?page=2\n"
        "  auth:\n    type: bearer\n    token-env: GITHUB_TOKEN\n---\nBody.\n"
    )
    path = write(monitors, "status", text)
    CompiledDefinitions(load_registry()).parse(str(path), "project")
    assert len(entries()) == 1

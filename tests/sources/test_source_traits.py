"""A source describes itself: a third-party source gets every feature through its traits.

The example ``example-notes`` source (``tests/fixtures/example_source``) defines every
optional trait; each test shows one reaching the user through the real command or a
real daemon process: ``init --type`` writes its template, ``monitor test`` prints its
baseline summary, the scheduler and ``monitor explain`` use its 10-minute interval,
the daemon watches its hinted file, and a project monitor of it that reads outside the
workspace waits for ``monitor approve``. A source that defines no traits gets the
defaults, and one whose traits are malformed is skipped at registration.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.catalog.definitions import DefinitionCache
from agentmonitors.cli.main import main
from agentmonitors.daemon.client import call
from agentmonitors.runtime.scheduling import schedule_for
from agentmonitors.sources.plugins import source_problem
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.sources.traits import DEFAULT_BASELINE_NOTES, Every, traits_of
from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.fixtures.example_source.install import install_notes, write_dist_info
from tests.waiting import wait_for

Run = Callable[..., CliResult]

TEN_MINUTES_MS = 600_000


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example distributions, ``example-notes`` included, on ``sys.path`` for this test."""
    folder = install_notes(tmp_path / "site")
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [name for name in sys.modules if name.startswith("agentmonitors_example")]:
        del sys.modules[name]


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    return isolated_environment


def write_monitor(root: Path, monitor_id: str, watch: str) -> Path:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MONITOR.md"
    path.write_text(f"---\nwatch:\n{watch}---\nRead the notes.\n")
    return path


# --------------------------------------------------------------------------- defaults


class Bare:
    """A plugin that implements only the required part of the interface."""

    name = "bare"
    description = "Nothing optional."
    scope_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"topic": {"type": "string", "description": "What to\nwatch."}},
        "required": ["topic"],
    }

    async def observe(self, config: Any, context: Any) -> Any:
        raise AssertionError("not observed here")


def test_a_source_without_traits_gets_the_defaults() -> None:
    traits = traits_of(Bare())
    assert traits.stateful is False
    assert traits.cadence({}) == Every(30_000)
    assert traits.cadence({"interval": "2m"}) == Every(120_000)
    assert traits.file_hints({}, "/w") is None
    assert traits.approval({"topic": "x"}, "/w") is None
    assert traits.outside_paths({}, "/w") == frozenset()
    assert traits.baseline_summary({"anything": 1}) is None
    assert traits.baseline_notes == DEFAULT_BASELINE_NOTES
    assert dict(traits.scaffold_seeds) == {}
    assert schedule_for(traits, {}, START_MS - 29_999, START_MS).due is False
    assert schedule_for(traits, {}, START_MS - 30_000, START_MS).due is True


def test_a_plain_object_keeps_the_traits_it_defines() -> None:
    class Slow(Bare):
        default_interval_ms = 90_000
        stateful = True

    traits = traits_of(Slow())
    assert traits.cadence({}) == Every(90_000)
    assert traits.stateful is True
    # An authored interval still wins over the source's default.
    assert traits.cadence({"interval": "5s"}) == Every(5_000)


@pytest.mark.parametrize(
    ("attribute", "value", "problem"),
    [
        ("default_interval_ms", 0, "a default_interval_ms that is not a positive integer"),
        ("default_interval_ms", "30s", "a default_interval_ms that is not a positive integer"),
        (
            "scaffold_seeds",
            {"paths": "globs"},
            "scaffold_seeds that is not a mapping of glob or command to a watch key",
        ),
        ("baseline_notes", "one note", "baseline_notes that are not a list of strings"),
        ("file_hints", ["src"], "a file_hints that is not callable"),
        ("stateful", "yes", "a stateful that is not true or false"),
    ],
)
def test_malformed_traits_keep_a_plugin_out(attribute: str, value: Any, problem: str) -> None:
    assert source_problem(Bare()) is None
    source = Bare()
    setattr(source, attribute, value)
    assert source_problem(source) == f'source "bare" has {problem}'


def test_a_cadence_that_raises_is_a_schedule_error_not_a_crash() -> None:
    class Broken(Bare):
        def cadence(self, config: Any) -> Any:
            raise RuntimeError("no clock here")

    class Odd(Bare):
        def cadence(self, config: Any) -> Any:
            return 42

    broken = schedule_for(traits_of(Broken()), {}, None, START_MS)
    assert (broken.due, broken.error) == (False, "no clock here")

    class Vague(Bare):
        def cadence(self, config: Any) -> Any:
            return Every("5m")  # type: ignore[arg-type]

    odd = schedule_for(traits_of(Odd()), {}, None, START_MS)
    assert odd.error == "the source's cadence is int, not Every or OnCron"
    vague = schedule_for(traits_of(Vague()), {}, None, START_MS)
    assert vague.error == "the source's interval is '5m', not milliseconds"


def test_init_of_a_source_without_a_template_lists_its_keys(
    site: Path, project: Path, run_cli: Run
) -> None:
    (site / "bare_source.py").write_text(_BARE_MODULE)
    write_dist_info(site, "zz-bare", "1.0", {"bare": "bare_source:Bare"})
    try:
        created = run_cli("init", "topic", "--yes", "--type", "bare")
    finally:
        sys.modules.pop("bare_source", None)
    assert created.code == 0, created.err
    text = (project / ".claude/monitors/topic/MONITOR.md").read_text()
    assert (
        "watch:\n  type: bare\n  # This source's keys (see `agentmonitors source list`):\n" in text
    )
    assert "  # topic: (required) What to watch.\n" in text


_BARE_MODULE = """
class Bare:
    name = "bare"
    description = "Nothing optional."
    scope_schema = {
        "type": "object",
        "properties": {"topic": {"type": "string", "description": "What to\\nwatch."}},
        "required": ["topic"],
    }

    async def observe(self, config, context):
        raise AssertionError("not observed here")
"""


# --------------------------------------------------------------------------- init, monitor test


def test_init_writes_the_sources_own_template(site: Path, project: Path, run_cli: Run) -> None:
    created = run_cli("init", "notes", "--yes", "--type", "example-notes")
    assert created.code == 0, created.err
    text = (project / ".claude/monitors/notes/MONITOR.md").read_text()
    assert text == (
        "---\nname: 'Notes'\nwatch:\n  type: example-notes\n"
        "  # The notes file to follow, relative to the project root.\n  file: NOTES.md\n"
        "# low: a reminder when the agent is idle; normal: a reminder at the next prompt;\n"
        "# high: the change itself, injected at the next prompt or tool call.\n"
        "urgency: normal\n---\n\n"
        "The notes changed. Read the new lines and fold them into the current task.\n"
    )
    validated = run_cli("validate", "--format", "json")
    assert validated.json()["valid"] == 1, validated.out
    # It takes no --glob: the message names the sources that do, plugins included.
    seeded = run_cli("init", "other", "--yes", "--type", "example-notes", "--glob", "*.md")
    assert seeded.code == 1
    assert seeded.err == (
        "error: --glob is not supported for --type example-notes (it seeds watch.globs for "
        "file-fingerprint and watch.paths for incoming-changes)\n"
    )
    unknown = run_cli("init", "other", "--yes", "--type", "example-nope")
    assert unknown.code == 1
    assert unknown.err.startswith('error: Unknown --type "example-nope". Choose one of: ')
    assert unknown.err.rstrip().endswith(
        "incoming-changes, example-notes, example-echo; or a preset: pr-review, my-prs"
    )


def test_a_bad_type_changes_nothing_even_when_setting_a_project_up(
    isolated_environment: Path, run_cli: Run
) -> None:
    # The type is no longer a fixed choice, so it is checked before anything is written.
    result = run_cli("init", "--yes", "--type", "carrier-pigeon")
    assert result.code == 1
    assert result.err.startswith('error: Unknown --type "carrier-pigeon". Choose one of: ')
    assert list(isolated_environment.iterdir()) == []


def test_monitor_test_prints_the_sources_baseline_summary(
    site: Path, project: Path, run_cli: Run
) -> None:
    (project / "NOTES.md").write_text("one\ntwo\n")
    path = write_monitor(project, "notes", "  type: example-notes\n  file: NOTES.md\n")
    shown = run_cli("monitor", "test", str(path))
    assert shown.code == 0, shown.err
    assert shown.out == (
        'Testing monitor "notes" (source: example-notes)...\n'
        '\nBaseline established. The "example-notes" source requires a prior baseline before '
        "it can detect changes.\n"
        f"  2 line(s) in {project / 'NOTES.md'}\n"
        "Running a second observation to demonstrate change detection...\n\n"
        "No changes detected since baseline. This is expected — both observations happened"
        " within the same command invocation.\n"
        "\nThe daemon re-reads the notes as soon as the file changes.\n"
    )


# --------------------------------------------------------------------------- daemon


@pytest.fixture
def daemon(project: Path, tmp_path: Path) -> Iterator[ClockedDaemon]:
    process = ClockedDaemon(project, tmp_path / "clock")
    yield process
    if process.process is not None:
        process.process.kill()
        process.process.communicate(timeout=10)


def skipped(result: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {entry["monitorId"]: entry for entry in result["skippedMonitors"]}


@pytest.mark.slow
def test_the_daemon_schedules_hints_and_gates_the_source_as_it_says(
    site: Path, project: Path, daemon: ClockedDaemon, tmp_path: Path, run_cli: Run
) -> None:
    notes = project / "NOTES.md"
    notes.write_text("one\n")
    outside = tmp_path / "elsewhere" / "shared.md"
    outside.parent.mkdir()
    outside.write_text("shared\n")
    write_monitor(project, "notes", "  type: example-notes\n  file: NOTES.md\n")
    write_monitor(project, "shared", f"  type: example-notes\n  file: {outside}\n")

    # Approval: the monitor reading outside the workspace waits, named by its reach.
    waiting = run_cli("validate", "--format", "json").json()["awaitingApproval"]
    assert [(entry["id"], entry["note"].split(";")[0]) for entry in waiting] == [
        ("shared", f"awaiting approval — it reads {outside} outside the workspace")
    ]

    daemon.start({"PYTHONPATH": str(site)})
    assert daemon.results("notes") == ["no-change"]  # the baseline
    assert daemon.results("shared") == []

    # The scheduler: 30 s (the global default) is not enough, 10 minutes is.
    daemon.advance(30)
    result = daemon.tick()
    assert skipped(result)["shared"] == {
        "monitorId": "shared",
        "reason": "blocked: awaiting-approval",
    }
    assert skipped(result)["notes"]["nextDueAt"] == "2026-12-01T10:30:00.000Z"
    explained = call(daemon.socket, "monitor.explain", {"monitorId": "notes"}, timeout_s=30)
    scheduling = next(stage for stage in explained["stages"] if stage["id"] == "scheduling")
    assert scheduling["details"]["intervalMs"] == TEN_MINUTES_MS
    assert "(every 10m)" in scheduling["reason"]
    daemon.set_time(START_MS + TEN_MINUTES_MS)
    assert daemon.tick()["evaluatedMonitors"] == ["notes"]

    # File hints: a write to the notes is observed with no tick asked for.
    daemon.new_events()
    notes.write_text("one\ntwo\n")
    wait_for(lambda: daemon.query("SELECT 1 FROM monitor_events WHERE monitor_id = 'notes'"))
    assert [event[:2] for event in daemon.new_events()] == [
        ("notes", "Notes changed: 2 line(s) in NOTES.md")
    ]

    # Once approved, the outside monitor runs on the next tick.
    assert main(["monitor", "approve", "--yes", "shared", "--workspace", str(project)]) == 0
    assert "shared" in daemon.tick()["evaluatedMonitors"]


def test_a_plugin_whose_approval_fails_is_a_problem_not_a_crash(project: Path) -> None:
    class Failing(Bare):
        def approval(self, config: Any, workspace: str) -> Any:
            raise OSError("ledger of mine is gone")

    class Wrong(Bare):
        name = "wrong"

        def approval(self, config: Any, workspace: str) -> Any:
            return {"outside": ["/etc"]}

    registry = bundled_registry()
    registry.register(Failing())
    registry.register(Wrong())
    write_monitor(project, "failing", "  type: bare\n  topic: x\n")
    write_monitor(project, "wrong", "  type: wrong\n  topic: x\n")
    write_monitor(project, "fine", "  type: schedule\n  cron: '0 9 * * *'\n")
    definitions = DefinitionCache(registry).load(str(project), None)
    assert [monitor.id for monitor in definitions.runnable] == ["fine"]
    assert {problem.monitor_id: problem.message for problem in definitions.problems} == {
        "failing": 'source "bare" cannot say what this monitor needs approved: '
        "ledger of mine is gone",
        "wrong": 'source "wrong" answered approval() with dict, not an Approval or None',
    }

"""Shape: the CEL gate, the jq payload and the rendered artifact, through a real Runtime."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.monitor.policy import DerivePolicy
from agentmonitors.runtime.shape import derive_facts, js_string, render_artifact
from agentmonitors.runtime.tick import Runtime, TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.store.database import Database

START = 1_780_000_000_000


class ScriptedSource:
    name = "scripted"
    description = "Test source"
    stateful = False
    scope_schema: Mapping[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.queue: list[ObservationResult] = []

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        return self.queue.pop(0) if self.queue else ObservationResult()


class Harness:
    def __init__(self, workspace: Path, db_path: Path) -> None:
        self.workspace = workspace
        self.clock = ManualClock(START)
        self.source = ScriptedSource()
        registry = SourceRegistry()
        registry.register(self.source)
        self.db = Database(str(db_path))
        self.runtime = Runtime(self.db, str(workspace), registry, clock=self.clock)

    def monitor(self, frontmatter: str, monitor_id: str = "m") -> None:
        folder = self.workspace / ".claude" / "monitors" / monitor_id
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\nwatch:\n  type: scripted\n{frontmatter}---\nAct.\n"
        (folder / "MONITOR.md").write_text(text)

    def observe(self, *observations: Observation) -> None:
        self.source.queue.append(ObservationResult(list(observations), next_state={"n": 1}))

    def tick(self, advance_ms: int = 0) -> TickResult:
        self.clock.advance(advance_ms)
        return asyncio.run(self.runtime.tick(["m"]))

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with self.db.read() as conn:
            return [dict(row) for row in conn.execute(sql, params)]

    def events(self) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM monitor_events ORDER BY created_at, id")

    def history(self) -> list[dict[str, Any]]:
        rows = self.rows("SELECT result, observation_data FROM observation_history ORDER BY id")
        return [{"result": r["result"], **json.loads(r["observation_data"])} for r in rows]

    def notify_state(self) -> Any:
        (row,) = self.rows("SELECT notify_state FROM monitor_state")
        return json.loads(row["notify_state"])


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    workspace = tmp_path / "ws"
    (workspace / ".claude" / "monitors").mkdir(parents=True)
    h = Harness(workspace, tmp_path / "data" / "inbox.db")
    yield h
    h.db.close()


def gate(expression: str, notify: str = "") -> str:
    return (
        "payload:\n  form: structured\n  transform:\n    language: cel\n"
        f"    expression: '{expression}'\n{notify}"
    )


# --------------------------------------------------------------------------- pure functions


def test_render_layout_sorts_keys_indents_and_writes_scalars_like_javascript() -> None:
    snapshot = {
        "b": 1.0,
        "a": "raw text",
        "c": None,
        "d": {"z": True, "y": [1, {"k": 2.5}, None]},
        "e": [],
    }
    assert render_artifact(snapshot, ["past-due", "hot"]) == "\n".join(
        [
            "# snapshot",
            "- a: raw text",
            "- b: 1",
            "- c: (none)",
            "- d:",
            "  - y:",
            "    - [0] 1",
            "    - [1]",
            "      - k: 2.5",
            "    - [2] (none)",
            "  - z: true",
            "- e:",
            "# facts",
            "- past-due",
            "- hot",
        ]
    )
    assert render_artifact("plain", []) == "# snapshot\n- plain\n# facts"
    assert render_artifact(None, []) == "# snapshot\n- (none)\n# facts"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1, "1"),
        (1.0, "1"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (123456789.125, "123456789.125"),
        (-3.0, "-3"),
        (True, "true"),
        (False, "false"),
        (10**22, "1e+22"),
    ],
)
def test_numbers_follow_javascript_string(value: float, text: str) -> None:
    assert js_string(value) == text


def test_render_is_byte_stable_whatever_the_key_order() -> None:
    one = {"b": {"y": 1, "x": [1, 2]}, "a": "t"}
    two = {"a": "t", "b": {"x": [1, 2], "y": 1}}
    assert render_artifact(one, ["f"]).encode() == render_artifact(two, ["f"]).encode()


def test_derive_facts_use_now_and_treat_errors_as_false() -> None:
    rules = [
        DerivePolicy("past-due", "due < now"),
        DerivePolicy("broken", "missing > 1"),
        DerivePolicy("typed", "due + 1.5 > 0.0"),
        DerivePolicy("always", "true"),
    ]
    snapshot = {"due": START + 1000, "now": 0}
    assert derive_facts(snapshot, START, rules) == ["always"]
    assert derive_facts(snapshot, START + 2000, rules) == ["past-due", "always"]
    # A non-mapping snapshot is wrapped as {value: x}.
    value_rule = [DerivePolicy("v", 'value == "hi"')]
    assert derive_facts("hi", START, value_rule) == ["v"]


# --------------------------------------------------------------------------- the gate


def test_a_passing_gate_delivers_the_snapshot_as_payload(harness: Harness) -> None:
    harness.monitor(gate("count > 2"))
    harness.observe(Observation("t", snapshot={"count": 3}, payload={"raw": True}))
    result = harness.tick()
    assert len(result.emitted_event_ids) == 1
    (event,) = harness.events()
    assert json.loads(event["payload"]) == {"count": 3}
    assert harness.history() == [{"result": "triggered", "observed": 1, "emitted": 1}]


@pytest.mark.parametrize(
    "expression",
    ["count > 5", "count", "missing > 1", "count + 0.5 > 1"],
    ids=["false", "non-bool", "undefined-field", "type-error"],
)
def test_a_gate_not_true_suppresses_without_touching_notify_state(
    harness: Harness, expression: str
) -> None:
    harness.monitor(
        gate(expression, "notify:\n  strategy: debounce\n  settle-for: 1m\n"),
    )
    harness.observe(Observation("t", snapshot={"count": 3}))
    result = harness.tick()
    assert result.emitted_event_ids == []
    assert result.errored_observations == []
    assert harness.events() == []
    assert harness.history() == [{"result": "suppressed", "observed": 1, "emitted": 0}]
    assert harness.notify_state() == {}  # nothing held for later


def test_the_gate_filters_each_observation_of_a_batch(harness: Harness) -> None:
    harness.monitor(gate("count > 2"))
    harness.observe(
        Observation("low", snapshot={"count": 1}, object_key="a"),
        Observation("high", snapshot={"count": 9}, object_key="b"),
    )
    harness.tick()
    assert [event["object_key"] for event in harness.events()] == ["b"]
    assert harness.history() == [{"result": "triggered", "observed": 2, "emitted": 1}]


def test_a_non_mapping_snapshot_is_gated_as_value(harness: Harness) -> None:
    harness.monitor(gate('value.startsWith("ok")'))
    harness.observe(Observation("pass", snapshot_text="ok: all good", object_key="a"))
    harness.observe(Observation("drop", snapshot=[1, 2], object_key="b"))
    harness.tick()
    harness.tick(60_000)
    (event,) = harness.events()
    assert event["object_key"] == "a"
    assert json.loads(event["payload"]) == "ok: all good"
    assert [row["result"] for row in harness.history()] == ["triggered", "suppressed"]


# --------------------------------------------------------------------------- jq


def test_jq_output_becomes_the_payload(harness: Harness) -> None:
    harness.monitor(
        "payload:\n  form: structured\n  transform:\n    language: jq\n"
        "    expression: '.sets | map({weight: .weight})'\n"
    )
    harness.observe(
        Observation(
            "t",
            snapshot={"sets": [{"weight": 100, "reps": 5}, {"weight": 110, "reps": 3}]},
            payload={"raw": 1},
        )
    )
    harness.tick()
    (event,) = harness.events()
    assert json.loads(event["payload"]) == [{"weight": 100}, {"weight": 110}]
    assert json.loads(event["snapshot_metadata"])["sets"][0]["reps"] == 5


def test_a_failing_jq_program_fails_only_that_event(harness: Harness) -> None:
    harness.monitor(
        "payload:\n  form: structured\n  transform:\n    language: jq\n    expression: '.n + 1'\n"
    )
    harness.observe(
        Observation("bad", snapshot={"n": "text"}, object_key="a"),
        Observation("good", snapshot={"n": 1}, object_key="b"),
    )
    result = harness.tick()
    assert len(result.emitted_event_ids) == 1
    (event,) = harness.events()
    assert json.loads(event["payload"]) == 2
    assert [row["result"] for row in harness.history()] == ["triggered", "errored"]


def test_other_forms_leave_the_payload_alone(harness: Harness) -> None:
    harness.monitor("payload:\n  form: prose\n")
    harness.observe(Observation("t", snapshot={"a": 1}, payload={"raw": 1}))
    harness.tick()
    (event,) = harness.events()
    assert json.loads(event["payload"]) == {"raw": 1}


# --------------------------------------------------------------------------- render


RENDER = (
    "shape:\n  render: rendered\n  derive:\n"
    "    - name: past-due\n      when: 'due < now'\n"
    "    - name: never\n      when: 'missing == 1'\n"
)


def test_render_replaces_snapshot_text_and_a_crossed_threshold_is_one_added_line(
    harness: Harness,
) -> None:
    harness.monitor(RENDER)
    due = START + 30_000
    harness.observe(Observation("t", snapshot_text="raw", snapshot={"due": due, "title": "x"}))
    harness.tick()
    harness.observe(Observation("t", snapshot_text="raw", snapshot={"title": "x", "due": due}))
    harness.tick(60_000)
    first, second = harness.events()
    assert first["snapshot_text"] == f"# snapshot\n- due: {due}\n- title: x\n# facts"
    assert second["snapshot_text"] == f"# snapshot\n- due: {due}\n- title: x\n# facts\n- past-due"
    assert second["diff_text"] == "+ 5: - past-due"
    (snapshot,) = harness.rows("SELECT content FROM monitor_snapshots ORDER BY id DESC LIMIT 1")
    assert snapshot["content"] == second["snapshot_text"]


def test_same_input_renders_identical_bytes(harness: Harness) -> None:
    harness.monitor(RENDER)
    for snapshot in (
        {"b": [1, 2.0], "a": {"y": None, "x": True}},
        {"a": {"x": True, "y": None}, "b": [1, 2]},
    ):
        harness.observe(Observation("t", snapshot=snapshot))
        harness.tick(1000)
    first, second = harness.events()
    assert first["snapshot_text"].encode() == second["snapshot_text"].encode()
    assert second["diff_text"] == ""


def test_without_render_the_source_text_is_kept(harness: Harness) -> None:
    harness.monitor("shape:\n  derive:\n    - name: x\n      when: 'true'\n")
    harness.observe(Observation("t", snapshot_text="raw", snapshot={"a": 1}))
    harness.tick()
    (event,) = harness.events()
    assert event["snapshot_text"] == "raw"


def test_a_held_observation_renders_at_its_observed_at(harness: Harness) -> None:
    harness.monitor(
        "shape:\n  render: rendered\n  derive:\n"
        f"    - name: late\n      when: 'now >= {START + 10_000}'\n"
        "notify:\n  strategy: debounce\n  settle-for: 15s\n"
    )
    harness.observe(Observation("t", snapshot={"a": 1}))
    assert harness.tick().emitted_event_ids == []
    held = harness.notify_state()["pendingDebounce"]["observations"][0]
    assert held["monitor"]["frontmatter"]["shape"]["render"] == "rendered"
    # Flushed 60 s later, long after `late` holds; the artifact is still the one
    # of the moment it was observed.
    assert len(harness.tick(60_000).emitted_event_ids) == 1
    (event,) = harness.events()
    assert event["snapshot_text"] == "# snapshot\n- a: 1\n# facts"
    assert event["created_at"] == START // 1000

"""The plain policy a definition holds says exactly what the validated model says."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from agentmonitors.monitor.model import Frontmatter
from agentmonitors.monitor.policy import (
    DerivePolicy,
    MonitorPolicy,
    PayloadPolicy,
    ShapePolicy,
    TransformPolicy,
    UrgencyBand,
)
from agentmonitors.runtime.notify import CapturedMonitor

WATCH = {"type": "file-fingerprint", "globs": ["a/**"]}

FRONTMATTERS: list[dict[str, Any]] = [
    {"watch": WATCH},
    {
        "watch": {**WATCH, "interval": "5s"},
        "name": "Docs",
        "urgency": "low..high",
        "notify": {"strategy": "debounce", "settle-for": "30s"},
        "baseline-strategy": "incremental",
        "tags": ["a", "b"],
    },
    {"watch": WATCH, "notify": {"strategy": "throttle", "suppress-for": "1m"}, "urgency": "high"},
    {"watch": WATCH, "notify": {"strategy": "rollup", "window": "0 9 * * *"}, "tags": []},
    {
        "watch": WATCH,
        "notify": {"strategy": "rollup", "window": "0 9 * * 1-5", "timezone": "Europe/Paris"},
        "shape": {"derive": [{"name": "late", "when": "due < now"}], "render": "rendered"},
        "payload": {
            "form": "structured",
            "transform": {"language": "jq", "expression": ".items"},
            "encoding": "toon",
        },
    },
    {"watch": WATCH, "shape": {"derive": []}, "payload": {"form": "prose"}},
    {"watch": WATCH, "shape": {"render": "rendered"}, "payload": {"form": "artifact"}},
]


@pytest.mark.parametrize("data", FRONTMATTERS)
def test_each_block_turns_back_into_the_models_own_dict(data: dict[str, Any]) -> None:
    model = Frontmatter.model_validate(data)
    policy = model.to_policy()
    assert policy.band == model.band
    assert policy.urgency == model.urgency
    assert (policy.name, policy.baseline_strategy) == (model.name, model.baseline_strategy)
    assert policy.watch.type == model.watch.type and policy.watch.interval == model.watch.interval
    assert policy.tags == (None if model.tags is None else tuple(model.tags))
    for block in ("notify", "shape", "payload"):
        authored = getattr(model, block)
        plain = getattr(policy, block)
        if authored is None:
            assert plain is None
            continue
        expected = authored.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert plain.as_authored() == expected
        # Same keys in the same order: what explain, scan and the stored state print.
        assert list(plain.as_authored()) == list(expected)
    assert MonitorPolicy.from_authored(policy.as_authored()) == policy


def test_a_held_observation_keeps_its_shape_and_payload_through_the_stored_state() -> None:
    shape = ShapePolicy((DerivePolicy("late", "due < now"),), "rendered")
    payload = PayloadPolicy("structured", TransformPolicy("jq", ".items"), "json")
    captured = CapturedMonitor(
        id="docs",
        display_name="Docs",
        file_path="/w/.claude/monitors/docs/MONITOR.md",
        instructions="Look.",
        source_name="file-fingerprint",
        name="Docs",
        band=UrgencyBand("normal", "high"),
        baseline_strategy="incremental",
        tags=("a",),
        shape=shape,
        payload=payload,
    )
    stored = captured.to_json()
    assert stored["frontmatter"] == {
        "watch": {"type": "file-fingerprint"},
        "urgency": "normal..high",
        "baseline-strategy": "incremental",
        "name": "Docs",
        "tags": ["a"],
        "shape": {"derive": [{"name": "late", "when": "due < now"}], "render": "rendered"},
        "payload": {
            "form": "structured",
            "transform": {"language": "jq", "expression": ".items"},
            "encoding": "json",
        },
    }
    fallback = CapturedMonitor(**{**captured.__dict__, "shape": None, "payload": None})
    assert CapturedMonitor.from_json(stored, fallback) == captured
    # A stored block that no longer validates is dropped rather than trusted.
    stored["frontmatter"]["payload"]["transform"]["expression"] = "]["
    assert CapturedMonitor.from_json(stored, fallback).payload is None


@pytest.mark.slow
def test_a_definition_imports_neither_pydantic_nor_the_yaml_parser() -> None:
    code = (
        "import sys\n"
        "import agentmonitors.monitor.policy, agentmonitors.monitor.parse, "
        "agentmonitors.monitor.discovery, agentmonitors.runtime.notify\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in "
        "('pydantic', 'pydantic_core', 'ruamel')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

"""Each shape is declared once; every other reader of it is held to that declaration.

The monitor configuration is declared by the pydantic models (``monitor/model.py``);
``monitor/policy.py`` reads the policy back with the standard library (the compiled
cache, a tick without pydantic). Where a frontmatter block starts and ends is declared
by ``fastpath/scalar_frontmatter.py`` (``is_delimiter``, ``closing_delimiter``), used by
``monitor/frontmatter.py``'s split; the enable-file reader, the presets and the
scaffolds are checked against that split. Each check feeds the same corpus
(tests/monitor/corpus.py: fixtures, presets, scaffolds, every MONITOR.md the tests
write, malformed cases) to both sides and compares values and what each refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from agentmonitors.catalog.presets import PRESETS, render_preset
from agentmonitors.catalog.scaffold import render_template
from agentmonitors.fastpath.scalar_frontmatter import parse_scalar_frontmatter
from agentmonitors.monitor.frontmatter import FrontmatterError, split_document
from agentmonitors.monitor.frontmatter_yaml import load_frontmatter
from agentmonitors.monitor.model import Frontmatter
from agentmonitors.monitor.policy import MonitorPolicy
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES
from tests.monitor.corpus import monitor_texts

CORPUS = monitor_texts()
DAMAGED = (KeyError, TypeError, ValueError, AttributeError)


def frontmatters() -> list[Mapping[str, Any]]:
    """Every corpus document whose YAML loads to a mapping."""
    found = []
    for text in CORPUS:
        try:
            data = load_frontmatter(split_document(text)).data
        except FrontmatterError:
            continue
        if isinstance(data, Mapping):
            found.append(data)
    return found


def stored_shape(data: Mapping[str, Any]) -> dict[str, Any]:
    """An authored frontmatter in the shape ``MonitorPolicy.as_authored`` stores (an
    urgency as ``[lo, hi]``)."""
    stored = dict(data)
    urgency = stored.get("urgency")
    if isinstance(urgency, str):
        parts = urgency.split("..") if ".." in urgency else [urgency, urgency]
        stored["urgency"] = [part.strip() for part in parts]
    return stored


def authored_shape(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse: what an author writes for a stored policy."""
    authored = dict(stored)
    if "urgency" in authored:
        authored["urgency"] = "..".join(authored["urgency"])
    return authored


def test_the_corpus_holds_valid_and_malformed_monitors() -> None:
    accepted = refused = 0
    for data in frontmatters():
        try:
            Frontmatter.model_validate(data)
        except ValidationError:
            refused += 1
        else:
            accepted += 1
    assert accepted >= 50
    assert refused >= 15


def test_the_policy_reader_accepts_what_the_model_accepts_with_its_values() -> None:
    """The model decides; the standard-library reader accepts exactly the same
    documents and reads the same policy from each."""
    for data in frontmatters():
        try:
            model: MonitorPolicy | None = Frontmatter.model_validate(data).to_policy()
        except ValidationError:
            model = None
        try:
            reader: MonitorPolicy | None = MonitorPolicy.from_authored(stored_shape(data))
        except DAMAGED:
            reader = None
        assert reader == model, data


def test_what_the_policy_stores_the_model_reads_back_the_same() -> None:
    """``as_authored`` writes the model's own key names: the stored dict, given to the
    model and to the reader, is the same policy again."""
    checked = 0
    for data in frontmatters():
        try:
            policy = Frontmatter.model_validate(data).to_policy()
        except ValidationError:
            continue
        stored = policy.as_authored()
        assert MonitorPolicy.from_authored(stored) == policy
        assert Frontmatter.model_validate(authored_shape(stored)).to_policy() == policy
        checked += 1
    assert checked >= 50


# --------------------------------------------------------------------------- frontmatter

DELIMITER_CASES = (
    "---\na: 1\n---\n",
    "---\r\na: 1\r\n---\r\nbody\r\n",
    "\ufeff---\na: 1\n---\n",
    "---   \na: 1\n---\t\n",
    "--- \na: 1\n",
    "----\na: 1\n----\n",
    " ---\na: 1\n---\n",
    "---\n---\n",
    "---\n",
    "",
    "a: 1\n",
    "---\na: 1\n---\nb: 2\n---\n",
    "---\na: 1\x0b---\n",
    "---\na: 1\u2028---\nbody",
)


@pytest.mark.parametrize("text", [*DELIMITER_CASES, *CORPUS])
def test_the_enable_file_reader_finds_the_block_the_split_finds(text: str) -> None:
    """``parse_scalar_frontmatter`` (every hook) reads the block ``split_document``
    finds, and none where the split finds none or refuses the document."""
    try:
        yaml_text = split_document(text).yaml_text
    except FrontmatterError:
        yaml_text = None
    scalar = parse_scalar_frontmatter(text)
    if yaml_text is None:
        assert scalar is None
    else:
        assert scalar == parse_scalar_frontmatter("---\n" + yaml_text + "---\n")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_rendered_preset_splits_as_its_template_does(name: str) -> None:
    preset = PRESETS[name]
    template = split_document(preset.template())
    plain = split_document(render_preset(preset, display_name=None, urgency=None))
    assert (plain.yaml_text, plain.body) == (template.yaml_text, template.body)
    seeded = split_document(render_preset(preset, display_name="It's \\ mine", urgency="high"))
    assert seeded.body == template.body
    data = load_frontmatter(seeded).data
    assert (data["name"], data["urgency"]) == ("It's \\ mine", "high")


@pytest.mark.parametrize("source_type", BUNDLED_SOURCE_NAMES)
def test_a_scaffold_splits_into_its_frontmatter_and_body(source_type: str) -> None:
    text = render_template(source_type, name="A: monitor", urgency="low", patterns=("a/*.md",))
    split = split_document(text)
    data = load_frontmatter(split).data
    assert (data["name"], data["watch"]["type"], data["urgency"]) == (
        "A: monitor",
        source_type,
        "low",
    )
    assert split.body.strip()
    assert text.endswith(split.body)

"""Observing reads a validated watch block with the standard library, to the model's values.

Each bundled source's ``plain_config`` must agree with its pydantic model: whatever it
accepts, the model accepts too and gives the same value for every field; whatever it is
unsure of, ``observed_config`` hands to the model, so a bad block still fails with the
model's exact message. Checked over the blocks ``init`` writes, the presets, every
monitor written in this test suite, hand-picked edge cases and a few thousand seeded
random variations of them.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agentmonitors.fastpath import lean_dataclass
from agentmonitors.monitor.frontmatter import split_document
from agentmonitors.monitor.frontmatter_yaml import load_frontmatter
from agentmonitors.sources import file_fingerprint
from agentmonitors.sources.api_poll import plain as api_poll_plain
from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.command_poll import plain as command_poll_plain
from agentmonitors.sources.file_fingerprint import plain as file_fingerprint_plain
from agentmonitors.sources.incoming_changes import plain as incoming_changes_plain
from agentmonitors.sources.plain_config import Unexpected
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES, bundled_registry
from agentmonitors.sources.schedule import plain as schedule_plain
from agentmonitors.sources.traits import ScaffoldSeed

TESTS = Path(__file__).resolve().parents[1]
PRESETS = Path(file_fingerprint.__file__).resolve().parents[2] / "catalog" / "presets"

READERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "file-fingerprint": file_fingerprint_plain.plain_config,
    "api-poll": api_poll_plain.plain_config,
    "command-poll": command_poll_plain.plain_config,
    "schedule": schedule_plain.plain_config,
    "incoming-changes": incoming_changes_plain.plain_config,
}


def source(name: str) -> ModelSource:
    found = bundled_registry().get(name)
    assert isinstance(found, ModelSource)
    return found


def model_values(value: Any) -> Any:
    """A model's declared fields by Python name, nested models likewise (extras left out)."""
    if isinstance(value, BaseModel):
        return {name: model_values(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, list):
        return [model_values(item) for item in value]
    if isinstance(value, dict):
        return {key: model_values(item) for key, item in value.items()}
    return value


def watch_blocks(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The bundled-source watch block of a MONITOR.md text, if it has one."""
    try:
        data = load_frontmatter(split_document(text)).data
    except Exception:
        return
    watch = data.get("watch") if isinstance(data, dict) else None
    if isinstance(watch, dict) and watch.get("type") in READERS:
        config = {key: value for key, value in watch.items() if key != "type"}
        yield str(watch["type"]), config


def scaffolded() -> list[tuple[str, dict[str, Any]]]:
    blocks = []
    seeds = (
        ScaffoldSeed(),
        ScaffoldSeed(patterns=("docs/**/*.md", "src/*.py")),
        ScaffoldSeed(command=("make", "check")),
    )
    for name in BUNDLED_SOURCE_NAMES:
        for seed in seeds:
            scaffold = source(name).scaffold(seed)
            assert scaffold is not None
            text = f"---\nwatch:\n  type: {name}\n{scaffold.watch}---\n"
            blocks.extend(watch_blocks(text))
    return blocks


def presets() -> list[tuple[str, dict[str, Any]]]:
    return [
        block for path in sorted(PRESETS.glob("*.md")) for block in watch_blocks(path.read_text())
    ]


# A watch-block literal in a source's own tests has one of its required keys.
REQUIRED = {
    "file-fingerprint": "globs",
    "api-poll": "url",
    "command-poll": "command",
    "schedule": "cron",
    "incoming-changes": "paths",
}


def written_in_tests() -> list[tuple[str, dict[str, Any]]]:
    """Every MONITOR.md text written as a plain string anywhere in the test suite, and
    every literal watch block in a bundled source's own tests."""
    blocks = []
    for path in sorted(TESTS.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        own = path.stem.removeprefix("test_").replace("_", "-")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "watch:" in node.value
                and node.value.lstrip().startswith("---")
            ):
                blocks.extend(watch_blocks(node.value.lstrip()))
            elif own in REQUIRED and isinstance(node, ast.Dict):
                try:
                    literal = ast.literal_eval(node)
                except ValueError:
                    continue
                if REQUIRED[own] in literal or "change-detection" in literal:
                    blocks.append((own, literal))
    return blocks


EDGE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("file-fingerprint", {"globs": "a.txt"}),
    ("file-fingerprint", {"globs": ["a", "b/**"], "ignore": [], "cwd": None}),
    ("file-fingerprint", {"globs": "a", "ignore": "b", "cwd": "sub", "interval": "0s"}),
    ("file-fingerprint", {"globs": "a", "extra": {"kept": True}}),
    ("schedule", {"cron": "0 9 * * 1-5", "timezone": "Europe/Paris", "label": "Morning"}),
    ("schedule", {"cron": "*/5 * * * *", "label": None}),
    ("incoming-changes", {"paths": ["docs/**", ":(exclude)x"], "branch": "main", "cwd": "."}),
    ("command-poll", {"command": ["true"], "env": {"A": "1"}, "key": "k", "timeout": "1m"}),
    ("command-poll", {"command": [""], "change-detection": {}}),
    ("command-poll", {"command": ["x"], "change-detection": None, "env": None}),
    (
        "command-poll",
        {
            "command": ["x"],
            "change-detection": {
                "strategy": "json-diff",
                "ignore-paths": ["$.a.b", "c"],
                "collection": {"path": "$.items", "key": "id", "ignore-paths": ["$.seen"]},
            },
        },
    ),
    ("command-poll", {"command": ["x"], "change-detection": {"strategy": "exit-code"}}),
    ("api-poll", {"url": "https://example.com/x", "method": "POST", "headers": {"A": "b"}}),
    ("api-poll", {"url": "http://127.0.0.1:8080/", "auth": {"type": "basic", "username": "u"}}),
    ("api-poll", {"url": "http://h/", "auth": {"type": "bearer", "token-env": "T", "x": 1}}),
    (
        "api-poll",
        {
            "url": "http://h/",
            "change-detection": {
                "strategy": "json-diff",
                "collection": {"path": "tasks", "key": "id"},
                "note": "kept",
            },
        },
    ),
    (
        "api-poll",
        {
            "change-detection": {
                "composite": {
                    "object-key": "status",
                    "title": None,
                    "parts": [
                        {"id": "a", "url": "http://h/a"},
                        {"id": "b" * 256, "url": "https://h"},
                    ],
                }
            },
            "url": None,
        },
    ),
    ("api-poll", {"url": "http://h/", "change-detection": {"strategy": None}}),
]

# Values a mutation may put anywhere: right, wrong and borderline types and texts.
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    1.5,
    "",
    " ",
    "x",
    "30s",
    "0s",
    "05s",
    "2147483648s",
    "1m",
    "5m",
    "GET",
    "POST",
    "get",
    "bearer",
    "basic",
    "text-diff",
    "json-diff",
    "exit-code",
    "status-code",
    "HEAD",
    "UTC",
    "Mars/Base",
    "0 9 * * 1-5",
    "61 * * * *",
    "$",
    "$.a",
    "a..b",
    "$.a[0]",
    "$x",
    "http://h/",
    "https://h:99/x",
    "ftp://h/",
    "http://",
    "http://h:x/",
    [],
    [""],
    [" "],
    ["a"],
    ["a", 1],
    [{"id": "a", "url": "http://h/"}],
    {},
    {"A": "b"},
    {"A": 1},
    {1: "b"},
    {"path": "a", "key": "id"},
    {"strategy": "json-diff"},
    {"type": "bearer"},
    {"type": "bearer", "token": "t"},
    {"type": "basic"},
    {"object-key": "k", "parts": [{"id": "a", "url": "http://h/"}]},
    ("a",),
    "b" * 257,
    ["$.a[0]"],
    ["a..b"],
    ["$.ok", "*"],
]

KEYS: dict[str, tuple[str, ...]] = {
    "file-fingerprint": ("globs", "ignore", "cwd", "interval"),
    "schedule": ("cron", "timezone", "label"),
    "incoming-changes": ("paths", "branch", "cwd", "interval"),
    "command-poll": (
        "command",
        "cwd",
        "env",
        "timeout",
        "key",
        "interval",
        "change-detection",
        "change_detection",
    ),
    "api-poll": (
        "url",
        "method",
        "headers",
        "auth",
        "timeout",
        "interval",
        "change-detection",
        "change_detection",
    ),
}


def mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with one key set, dropped or renamed, or one item replaced, somewhere."""
    if isinstance(value, dict) and value and (depth < 3 and rng.random() < 0.5):
        key = rng.choice(list(value))
        return {**value, key: mutate(rng, value[key], depth + 1)}
    if isinstance(value, list) and value and (depth < 3 and rng.random() < 0.5):
        index = rng.randrange(len(value))
        return [*value[:index], mutate(rng, value[index], depth + 1), *value[index + 1 :]]
    if isinstance(value, dict):
        choice = rng.random()
        if choice < 0.3 and value:
            key = rng.choice(list(value))
            return {k: v for k, v in value.items() if k != key}
        if choice < 0.4 and value:
            key = rng.choice(list(value))
            renamed = key.replace("-", "_") if "-" in str(key) else f"{key}s"
            return {(renamed if k == key else k): v for k, v in value.items()}
        nested = (
            "strategy",
            "collection",
            "composite",
            "ignore-paths",
            "path",
            "key",
            "token",
            "token-env",
            "type",
            "object-key",
            "parts",
            "title",
            "id",
            "url",
        )
        key = rng.choice([*value, *nested])
        return {**value, key: rng.choice(ODD_VALUES)}
    return rng.choice(ODD_VALUES)


def substitutions(value: Any) -> Iterator[Any]:
    """``value`` changed at one place: each value swapped for each odd one, each key
    dropped or spelled the model's other way, a key no model knows added."""
    if isinstance(value, dict):
        yield {**value, "unknown-key": "x"}
        for key, item in value.items():
            yield {k: v for k, v in value.items() if k != key}
            if isinstance(key, str) and "-" in key:
                yield {(key.replace("-", "_") if k == key else k): v for k, v in value.items()}
            for odd in (*ODD_VALUES, *substitutions(item)):
                yield {**value, key: odd}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for odd in (*ODD_VALUES, *substitutions(item)):
                yield [*value[:index], odd, *value[index + 1 :]]


def fuzzed(seed_blocks: list[tuple[str, dict[str, Any]]], count: int) -> list[tuple[str, Any]]:
    rng = random.Random(13)
    blocks: list[tuple[str, Any]] = []
    by_source: dict[str, list[dict[str, Any]]] = {}
    for name, config in seed_blocks:
        by_source.setdefault(name, []).append(config)
    for _ in range(count):
        name = rng.choice(sorted(by_source))
        config = rng.choice(by_source[name])
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3:
                config = {**config, rng.choice(KEYS[name]): rng.choice(ODD_VALUES)}
            else:
                config = mutate(rng, config)
        blocks.append((name, config))
    return blocks


KNOWN_GOOD = [*scaffolded(), *presets(), *EDGE_CASES]
FROM_TESTS = written_in_tests()


def agrees(name: str, config: Any) -> str:
    """How the reading and the model agree on ``config`` ("read", "fallback", "invalid")."""
    model_source = source(name)
    read = READERS[name]
    try:
        model = model_source.parse_config(config)
    except ValidationError:
        model = None
    try:
        settings = read(config)
    except Unexpected:
        settings = None
    if settings is not None:
        assert model is not None, f"{name} read a config its model rejects: {config!r}"
        assert lean_dataclass.asdict(settings) == model_values(model), config
        return "read"
    if model is not None:
        # A valid block the reading was unsure of is read from the model's values.
        observed = model_source.observed_config(config, read)
        assert lean_dataclass.asdict(observed) == model_values(model), config
        return "fallback"
    with pytest.raises(ValueError, match=r"^Invalid ") as raised:
        model_source.observed_config(config, read)
    with pytest.raises(ValueError, match=r"^Invalid ") as expected:
        model_source.checked_config(config)
    assert str(raised.value) == str(expected.value)
    return "invalid"


@pytest.mark.parametrize(("name", "config"), KNOWN_GOOD, ids=lambda v: str(v)[:40])
def test_a_valid_block_is_read_without_the_model_to_the_models_values(
    name: str, config: dict[str, Any]
) -> None:
    assert agrees(name, config) == "read"


def test_the_corpus_covers_every_source_and_the_suites_monitors() -> None:
    assert {name for name, _ in KNOWN_GOOD} == set(READERS)
    assert len(FROM_TESTS) >= 20
    assert {name for name, _ in FROM_TESTS} == set(READERS)


def test_every_monitor_written_in_the_tests_reads_as_its_model_does() -> None:
    outcomes = [agrees(name, config) for name, config in FROM_TESTS]
    assert outcomes.count("read") >= len(FROM_TESTS) // 2


def test_blocks_changed_in_one_place_are_read_as_the_model_reads_them() -> None:
    changed = [(name, odd) for name, config in EDGE_CASES for odd in substitutions(config)]
    outcomes = [agrees(name, config) for name, config in changed]
    assert outcomes.count("read") > 100
    assert outcomes.count("invalid") > 1000


def test_random_blocks_are_read_as_the_model_reads_them_or_fail_with_its_message() -> None:
    outcomes = [agrees(name, config) for name, config in fuzzed(KNOWN_GOOD + FROM_TESTS, 3000)]
    # Each outcome is common enough that the comparison means something.
    assert outcomes.count("read") > 300
    assert outcomes.count("invalid") > 300
    assert outcomes.count("fallback") > 10

"""Keyed collections: items by key, and one observation per added/changed/removed item."""

from __future__ import annotations

from typing import Any

import pytest

from agentmonitors.sources.change_detection_config import ClosedCollection, Collection
from agentmonitors.sources.collections_diff import (
    CollectionError,
    canonical_json,
    collection_items,
    collection_observations,
    display_object_key,
    keyed_snapshot_from_state,
)

TASKS = Collection.model_validate({"path": "$.tasks", "key": "id", "ignore-paths": ["$.seen"]})


def doc(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"fetchedAt": "now", "tasks": list(tasks)}


def test_items_are_keyed_normalized_and_in_document_order() -> None:
    items = collection_items(
        doc({"id": 2, "b": 1, "a": {"z": 1, "y": 2}, "seen": 5}, {"id": "x", "v": True}), TASKS
    )
    assert list(items) == ["2", "x"]
    assert items["2"] == {"a": {"y": 2, "z": 1}, "b": 1, "id": 2}
    assert list(items["2"]) == ["a", "b", "id"]
    assert list(items["2"]["a"]) == ["y", "z"]


def test_bare_and_root_paths_and_mapping_config() -> None:
    assert list(collection_items({"a": {"b": [{"k": True}]}}, {"path": "a.b", "key": "k"})) == [
        "true"
    ]
    assert list(collection_items([{"k": 1.0}, {"k": 2.5}], {"path": "$", "key": "k"})) == [
        "1",
        "2.5",
    ]
    closed = ClosedCollection.model_validate({"path": "items", "key": "name"})
    assert list(collection_items({"items": [{"name": "n"}]}, closed)) == ["n"]


def test_ignore_paths_reach_nested_fields_and_tolerate_missing_ones() -> None:
    config = {"path": "$", "key": "id", "ignore-paths": ["meta.at", "$.gone.deeper"]}
    items = collection_items([{"id": 1, "meta": {"at": 1, "by": "me"}}], config)
    assert items == {"1": {"id": 1, "meta": {"by": "me"}}}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"other": []}, 'collection path "$.tasks" must select an array (got nothing)'),
        ({"tasks": {"a": 1}}, 'collection path "$.tasks" must select an array (got object)'),
        ({"tasks": "x"}, 'collection path "$.tasks" must select an array (got string)'),
        ({"tasks": 3}, 'collection path "$.tasks" must select an array (got number)'),
        ([], 'collection path "$.tasks" must select an array (got nothing)'),
        ({"tasks": [1]}, 'collection element is not an object (cannot read key "id")'),
        ({"tasks": [{"x": 1}]}, 'collection element is missing a scalar key field "id"'),
        ({"tasks": [{"id": None}]}, 'collection element is missing a scalar key field "id"'),
        ({"tasks": [{"id": [1]}]}, 'collection element is missing a scalar key field "id"'),
        (
            {"tasks": [{"id": 1}, {"id": "1"}]},
            'collection key "id" value "1" is not unique within the collection',
        ),
    ],
)
def test_author_facing_errors(document: Any, message: str) -> None:
    with pytest.raises(CollectionError) as caught:
        collection_items(document, TASKS)
    assert str(caught.value) == message


def test_bad_config_shapes_raise() -> None:
    with pytest.raises(CollectionError, match="path must be a non-empty string"):
        collection_items([], {"path": "", "key": "id"})
    with pytest.raises(CollectionError, match=r"\$x"):
        collection_items([], {"path": "$x", "key": "id"})
    with pytest.raises(CollectionError, match="key must be a non-empty string"):
        collection_items([], {"path": "$", "key": 3})


def test_baseline_yields_nothing() -> None:
    assert collection_observations(None, {"1": {"id": 1}}, scope_key="s") == []


def test_added_changed_removed_each_get_one_observation_with_stable_keys() -> None:
    before = collection_items(doc({"id": 1, "v": 1}, {"id": 2, "v": 2}, {"id": 3, "v": 3}), TASKS)
    after = collection_items(
        doc({"id": 4, "v": 4}, {"id": 3, "v": 3, "seen": 9}, {"id": 1, "v": 10}), TASKS
    )
    observations = collection_observations(
        before,
        after,
        scope_key="https://api.test/t?page=1",
        display_scope="https://api.test/t",
        payload={"url": "https://api.test/t?page=1"},
        query_scope={"url": "https://api.test/t?page=1"},
    )
    assert [(o.change_kind, o.object_key) for o in observations] == [
        ("created", "https://api.test/t?page=1#4"),
        ("modified", "https://api.test/t?page=1#1"),
        ("descoped", "https://api.test/t?page=1#2"),
    ]
    added = observations[0]
    assert added.title == added.summary == "Item added: https://api.test/t#4"
    assert observations[1].title == "Item changed: https://api.test/t#1"
    assert observations[2].title == "Item removed: https://api.test/t#2"
    assert added.payload == {
        "url": "https://api.test/t?page=1",
        "key": "4",
        "changeKind": "created",
    }
    assert added.query_scope == {
        "url": "https://api.test/t?page=1",
        "objectKey": "https://api.test/t?page=1#4",
    }
    assert added.snapshot_text is None
    assert added.snapshot is None
    assert added.salience is None


def test_reordering_and_formatting_are_not_changes() -> None:
    before = collection_items(doc({"id": 1, "a": 1, "b": 2.0}, {"id": 2}), TASKS)
    after = collection_items(doc({"id": 2}, {"b": 2, "a": 1, "id": 1}), TASKS)
    assert collection_observations(before, after, scope_key="s") == []


def test_json_round_trip_of_the_snapshot_keeps_working() -> None:
    import json

    before = collection_items(doc({"id": 1, "v": 1.5}), TASKS)
    state = json.loads(json.dumps({"body": "", "keyedSnapshot": before}))
    previous = keyed_snapshot_from_state(state)
    assert previous == before
    after = collection_items(doc({"id": 1, "v": 1.5}), TASKS)
    assert collection_observations(previous, after, scope_key="s") == []
    assert keyed_snapshot_from_state({"body": "x"}) is None
    assert keyed_snapshot_from_state(None) is None


def test_canonical_json() -> None:
    assert canonical_json({"b": [1.0, True], "a": "é"}) == '{"a":"é","b":[1,true]}'
    assert canonical_json([1, 2]) != canonical_json([2, 1])
    assert canonical_json(True) != canonical_json(1)


def test_display_object_key_bounds_titles_in_code_points() -> None:
    short = "x" * 60
    assert display_object_key(short) == short
    long = "y" * 61
    assert display_object_key(long) == "y" * 59 + "…"
    # Astral characters count as one code point, never split.
    emoji = "😀" * 70
    assert display_object_key(emoji) == "😀" * 59 + "…"
    # A combining accent stays with its base.
    accented = "a" * 58 + "e\u0301" + "z" * 10
    assert display_object_key(accented) == "a" * 58 + "…"
    # A flag (two regional indicators) is never halved.
    flags = "a" * 58 + "🇺🇸" + "z"
    assert display_object_key(flags) == "a" * 58 + "…"
    # A ZWJ sequence stays whole.
    zwj = "a" * 57 + "👩\u200d💻" + "z" * 5
    assert display_object_key(zwj) == "a" * 57 + "…"


def test_display_scope_is_bounded_but_item_key_is_whole() -> None:
    scope = "s" * 100
    (observation,) = collection_observations({}, {"k" * 80: {}}, scope_key=scope)
    assert observation.title == f"Item added: {'s' * 59}…#{'k' * 80}"
    assert observation.object_key == f"{scope}#{'k' * 80}"

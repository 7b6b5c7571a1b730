"""Keyed collections: a JSON array diffed item by item, shared by sources.

A ``change-detection.collection`` block (``path``, ``key``, ``ignore-paths``) turns a
parsed JSON document into a set of keyed items, so a change produces one observation
per added, changed or removed item, each with a stable ``objectKey``
(``<scope key>#<key value>``). api-poll and command-poll both use this module:

``collection_items(document, config) -> dict[str, Any]``
    The keyed snapshot of ``document``: key value (stringified) to the item minus its
    ``ignore-paths``, object keys sorted, in document order. Raises
    :class:`CollectionError` (a ``ValueError``) with an author-facing message when the
    path does not select an array, an element is not an object, a key is missing or not
    a scalar, or a key value repeats.

``collection_observations(previous, current, *, scope_key, display_scope, payload, query_scope)``
    The observations between two keyed snapshots; ``previous=None`` is the baseline and
    yields nothing. New key ⇒ ``created``, different canonical serialization ⇒
    ``modified``, vanished key ⇒ ``descoped``; reordering yields nothing. Order: created
    and modified in current order, then descoped in previous order.

``keyed_snapshot_from_state(state)``
    The ``keyedSnapshot`` stored in a source's previous ``nextState``, or None.

``canonical_json(value)`` and ``display_object_key(key)`` are the helpers both use.

The snapshot is plain JSON and belongs in the source's ``nextState`` under
``keyedSnapshot``.
"""

from __future__ import annotations

import copy
import json
import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from agentmonitors.sources.change_detection import collection_path_problem, ignore_path_problem
from agentmonitors.sources.observation import ChangeKind, Observation

KEYED_SNAPSHOT_FIELD: Final = "keyedSnapshot"
MAX_DISPLAY_KEY_LENGTH: Final = 60
ELLIPSIS: Final = "…"

VERBS: Final[dict[ChangeKind, str]] = {
    "created": "Item added",
    "modified": "Item changed",
    "descoped": "Item removed",
    "deleted": "Item deleted",
}


class CollectionError(ValueError):
    """A document that does not fit its ``change-detection.collection`` block."""


class CollectionSpec(Protocol):
    """What a collection block provides (``Collection`` and ``ClosedCollection`` do)."""

    @property
    def path(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def ignore_paths(self) -> list[str]: ...


def collection_items(document: Any, config: CollectionSpec | Mapping[str, Any]) -> dict[str, Any]:
    """The keyed snapshot of ``document`` (see the module docstring)."""
    path, key, ignore_paths = _spec(config)
    selected = _resolve(document, path)
    if not isinstance(selected, list):
        got = "nothing" if selected is _MISSING else _js_type(selected)
        raise CollectionError(f'collection path "{path}" must select an array (got {got})')
    items: dict[str, Any] = {}
    for element in selected:
        value = _key_value(element, key)
        if value in items:
            raise CollectionError(
                f'collection key "{key}" value "{value}" is not unique within the collection'
            )
        items[value] = _normalize(element, ignore_paths)
    return items


def collection_observations(
    previous: Mapping[str, Any] | None,
    current: Mapping[str, Any],
    *,
    scope_key: str,
    display_scope: str | None = None,
    payload: Mapping[str, Any] | None = None,
    query_scope: Mapping[str, str | list[str]] | None = None,
) -> list[Observation]:
    """One observation per added, changed or removed item; nothing on the baseline.

    ``scope_key`` is the source's exact identity (api-poll's URL, command-poll's key)
    and prefixes every item's ``objectKey``. ``display_scope`` (default ``scope_key``)
    is what titles show, bounded by :func:`display_object_key`: pass a redacted form
    when the identity is not fit to print. ``payload`` and ``query_scope`` are merged
    into each observation's own (``payload.key``/``changeKind``, ``queryScope.objectKey``).
    """
    if previous is None:
        return []
    shown = display_object_key(scope_key if display_scope is None else display_scope)
    extra_payload = dict(payload or {})
    extra_scope = dict(query_scope or {})

    def emit(value: str, kind: ChangeKind) -> Observation:
        object_key = f"{scope_key}#{value}"
        title = f"{VERBS[kind]}: {shown}#{value}"
        return Observation(
            title=title,
            summary=title,
            payload={**extra_payload, "key": value, "changeKind": kind},
            object_key=object_key,
            query_scope={**extra_scope, "objectKey": object_key},
            change_kind=kind,
        )

    observations: list[Observation] = []
    for value, item in current.items():
        if value not in previous:
            observations.append(emit(value, "created"))
        elif canonical_json(item) != canonical_json(previous[value]):
            observations.append(emit(value, "modified"))
    observations.extend(emit(value, "descoped") for value in previous if value not in current)
    return observations


def keyed_snapshot_from_state(state: Any) -> dict[str, Any] | None:
    """The ``keyedSnapshot`` of a previous ``nextState``; None means "no baseline yet"."""
    if not isinstance(state, Mapping):
        return None
    snapshot = state.get(KEYED_SNAPSHOT_FIELD)
    if not isinstance(snapshot, Mapping):
        return None
    return {str(value): item for value, item in snapshot.items()}


def canonical_json(value: Any) -> str:
    """Compact JSON with object keys sorted, numbers spelled as JSON tooling does.

    Equal exactly when two documents are semantically equal (``1`` and ``1.0`` alike,
    ``true`` never equal to ``1``); array order counts.
    """
    return json.dumps(
        _canonical_numbers(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def display_object_key(key: str) -> str:
    """``key`` bounded for a title: unchanged up to 60 code points, else cut + ``…``.

    The cut keeps whole grapheme clusters (combining marks, ZWJ sequences, flags and
    variation selectors stay with their base), so the result may be shorter than 60.
    """
    if len(key) <= MAX_DISPLAY_KEY_LENGTH:
        return key
    budget = MAX_DISPLAY_KEY_LENGTH - 1
    cut = budget
    while cut > 0 and _continues_cluster(key, cut):
        cut -= 1
    return key[:cut] + ELLIPSIS


# --- internals ----------------------------------------------------------------------

_MISSING: Final[Any] = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_ZWJ = "\u200d"


def _spec(config: CollectionSpec | Mapping[str, Any]) -> tuple[str, str, list[str]]:
    if isinstance(config, Mapping):
        path, key = config.get("path"), config.get("key")
        ignore = config.get("ignore-paths", config.get("ignore_paths")) or []
    else:
        path, key, ignore = config.path, config.key, list(config.ignore_paths or [])
    if not isinstance(path, str) or not path.strip():
        raise CollectionError("change-detection.collection.path must be a non-empty string")
    if not isinstance(key, str) or not key.strip():
        raise CollectionError("change-detection.collection.key must be a non-empty string")
    if not isinstance(ignore, list) or not all(isinstance(item, str) for item in ignore):
        raise CollectionError("change-detection.ignore-paths must be an array of strings")
    problem = collection_path_problem(path)
    if problem is not None:
        raise CollectionError(f"change-detection.collection.path {problem}")
    for item in ignore:
        problem = ignore_path_problem(item)
        if problem is not None:
            raise CollectionError(problem)
    return path, key, list(ignore)


def _segments(path: str) -> list[str]:
    if path == "$":
        return []
    return (path[2:] if path.startswith("$.") else path).split(".")


def _resolve(document: Any, path: str) -> Any:
    current = document
    for segment in _segments(path):
        if not isinstance(current, dict) or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def _js_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"  # dict and null, as JavaScript's typeof says


def _key_value(element: Any, key: str) -> str:
    if not isinstance(element, dict):
        raise CollectionError(f'collection element is not an object (cannot read key "{key}")')
    raw = element.get(key)
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float) and math.isfinite(raw):
        return str(int(raw)) if raw.is_integer() and abs(raw) < 1e21 else repr(raw)
    raise CollectionError(f'collection element is missing a scalar key field "{key}"')


def _normalize(element: dict[str, Any], ignore_paths: Sequence[str]) -> Any:
    clone = copy.deepcopy(element)
    for path in ignore_paths:
        _remove(clone, _segments(path))
    return _sorted_keys(clone)


def _remove(value: Any, segments: list[str]) -> None:
    current = value
    for segment in segments[:-1]:
        if not isinstance(current, dict):
            return
        current = current.get(segment)
    if segments and isinstance(current, dict):
        current.pop(segments[-1], None)


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def _canonical_numbers(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _canonical_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical_numbers(item) for item in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _continues_cluster(text: str, index: int) -> bool:
    """Whether a cut before ``text[index]`` would split a grapheme cluster."""
    char, before = text[index], text[index - 1]
    code = ord(char)
    if _ZWJ in (before, char):
        return True
    if unicodedata.category(char) in ("Mn", "Me", "Mc"):
        return True
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:  # variation selectors
        return True
    if 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:  # skin tones, tags
        return True
    if before == "\r" and char == "\n":
        return True
    if _regional(char) and _regional(before):
        # Flags pair regional indicators from the start of the run.
        run = 0
        while index - 1 - run >= 0 and _regional(text[index - 1 - run]):
            run += 1
        return run % 2 == 1
    return False


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF

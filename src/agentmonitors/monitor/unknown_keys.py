"""Unknown-key warnings at any depth, read off the pydantic models themselves.

A typo such as ``notify.setle-for`` or ``watch.change-detection.stratgy`` would
otherwise be dropped without a word wherever a block accepts extra keys. The walk
follows the authored data alongside the model: into nested models, lists of models,
and unions (picked by their discriminator, else by the best fit). A block that forbids
extra keys is not warned about: its unknown keys are already errors, and one mistake
gets one message.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from agentmonitors.monitor.issues import LineLookup
from agentmonitors.monitor.suggest import close_name, nearest_name

Path = tuple[str | int, ...]


def nearest_key_hint(key: str, known: Iterable[str]) -> str:
    choices = list(known)
    close = close_name(key, choices)
    if close is not None:
        return f'did you mean "{close}"?'
    nearest = nearest_name(key, choices)
    return (
        f'the nearest known key is "{nearest}"' if nearest is not None else "no keys are known here"
    )


def unknown_key_warning(
    key: str, path: Path, known: Iterable[str], lines: LineLookup | None
) -> str:
    dotted = ".".join(str(part) for part in (*path, key))
    line = lines((*path, key)) if lines is not None else None
    at = f" (line {line})" if line is not None else ""
    return f'unknown key "{dotted}" is ignored — {nearest_key_hint(key, known)}{at}'


def model_keys(model: type[BaseModel]) -> dict[str, Any]:
    """Authored key → annotation, for every field of ``model``."""
    return {info.alias or name: info.annotation for name, info in model.model_fields.items()}


def _forbids_extra(model: type[BaseModel]) -> bool:
    return model.model_config.get("extra") == "forbid"


def _models_in(annotation: Any, *, in_list: bool) -> list[type[BaseModel]]:
    """The models an annotation admits directly (or, with ``in_list``, as list items)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _models_in(get_args(annotation)[0], in_list=in_list)
    if origin in (Union, types.UnionType):
        found: list[type[BaseModel]] = []
        for arg in get_args(annotation):
            found += _models_in(arg, in_list=in_list)
        return found
    if origin is list:
        args = get_args(annotation)
        return _models_in(args[0], in_list=False) if in_list and args else []
    if in_list:
        return []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def _literal_values(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return ()


def _pick(candidates: list[type[BaseModel]], data: Mapping[str, Any]) -> type[BaseModel] | None:
    """The model ``data`` was meant as: a discriminator match, else the best fit."""
    if len(candidates) == 1:
        return candidates[0]
    for model in candidates:
        for key, annotation in model_keys(model).items():
            values = _literal_values(annotation)
            if values and key in data and data[key] in values:
                return model
    if not candidates:
        return None
    # No discriminator decided: warn against the model that explains most keys.
    return min(candidates, key=lambda model: len(set(data) - set(model_keys(model))))


def _children(
    annotation: Any, value: Any, path: Path
) -> Iterator[tuple[Mapping[str, Any], type[BaseModel], Path]]:
    if isinstance(value, Mapping):
        model = _pick(_models_in(annotation, in_list=False), value)
        if model is not None:
            yield value, model, path
    elif isinstance(value, list):
        item_models = _models_in(annotation, in_list=True)
        for index, item in enumerate(value):
            if isinstance(item, Mapping):
                model = _pick(item_models, item)
                if model is not None:
                    yield item, model, (*path, index)


def model_unknown_key_warnings(
    data: Mapping[str, Any],
    model: type[BaseModel],
    path: Path,
    lines: LineLookup | None,
    *,
    extra_known: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> list[str]:
    """Warnings for keys of ``data`` (authored at ``path``) that ``model`` does not know."""
    known = model_keys(model)
    known_names = (*known, *extra_known)
    skipped = set(skip)
    warnings: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str) or key in skipped:
            continue
        if key not in known:
            if key not in known_names and not _forbids_extra(model):
                warnings.append(unknown_key_warning(key, path, known_names, lines))
            continue
        for child, child_model, child_path in _children(known[key], value, (*path, key)):
            warnings += model_unknown_key_warnings(child, child_model, child_path, lines)
    return warnings

"""The pydantic side of a bundled source's config: the model bases and the schema shape.

Loaded only to validate a watch block or to produce its JSON Schema (``validate``,
``schema generate``, ``source list``); observing reads an already-validated config with
the standard library instead (``sources/plain_config.py``), so the tick never imports
pydantic for a bundled source.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict


class SourceConfig(BaseModel):
    """Base for a bundled source's config: authored kebab-case keys, strict types.

    Unknown keys are kept (docs/compatibility.md) and reported as warnings.
    """

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, populate_by_name=True)


class ClosedBlock(BaseModel):
    """A nested config block whose keys are all known: an unknown key is an error."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)


class OpenBlock(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True, populate_by_name=True)


def declared_values(model: BaseModel) -> dict[str, Any]:
    """The model's declared fields by authored key, nested models likewise; extras left out.

    What a validated config reads as plain data, for the standard-library reading that
    observing uses.
    """
    values: dict[str, Any] = {}
    for name, info in type(model).model_fields.items():
        values[info.alias or name] = _plain(getattr(model, name))
    return values


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return declared_values(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def draft07_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema reshaped for draft-07 editors and validators.

    Nested models are inlined (so the schema can be embedded in a larger one), and
    titles and ``null`` alternatives (an omitted key means the same thing and is what
    authors write) are dropped.
    """
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    tidy: dict[str, Any] = _tidy(_inline(schema, definitions))
    return tidy


def _inline(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = _inline(definitions[ref.removeprefix("#/$defs/")], definitions)
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return {**target, **_inline(siblings, definitions)}
    return {key: _inline(value, definitions) for key, value in node.items()}


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    if not isinstance(node, dict):
        return node
    tidy: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "discriminator":
            continue  # an OpenAPI keyword; draft-07 tools ignore or reject it
        if key == "description" and isinstance(value, str):
            tidy[key] = value.replace("``", "`")
        elif key == "properties":
            tidy[key] = {name: _tidy(prop) for name, prop in value.items()}
        else:
            tidy[key] = _tidy(value)
    alternatives = tidy.get("anyOf")
    if isinstance(alternatives, list):
        kept = [alt for alt in alternatives if alt != {"type": "null"}]
        if len(kept) == 1 and len(kept) != len(alternatives):
            del tidy["anyOf"]
            tidy = {**kept[0], **tidy}
    return tidy

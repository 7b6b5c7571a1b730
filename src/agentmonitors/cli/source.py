"""``agentmonitors source list``"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from agentmonitors.cli.output import emit, format_option, resolve_format, warn
from agentmonitors.sources.base import Source
from agentmonitors.sources.registry import load_registry


def describe_source(source: Source, toon: bool) -> dict[str, Any]:
    schema = source.scope_schema
    properties: Mapping[str, Any] = schema.get("properties") or {}
    descriptions = {
        name: prop["description"]
        for name, prop in properties.items()
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str)
    }
    defaults = {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, Mapping) and "default" in prop
    }
    fields = list(properties)
    return {
        "name": source.name,
        "description": source.description,
        "configFields": fields,
        "scopeFields": fields,
        "fieldDescriptions": (
            [{"field": key, "description": value} for key, value in descriptions.items()]
            if toon
            else descriptions
        ),
        "required": list(schema.get("required") or []),
        "defaults": defaults,
    }


def sources_as_text(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return "No sources installed."
    lines = ["Installed sources:"]
    for entry in entries:
        lines += ["", f"  {entry['name']} — {entry['description']}"]
        descriptions = entry["fieldDescriptions"]
        for name in entry["configFields"]:
            marks = []
            if name in entry["required"]:
                marks.append("required")
            if name in entry["defaults"]:
                marks.append(f"default {entry['defaults'][name]}")
            suffix = f" ({', '.join(marks)})" if marks else ""
            lines.append(f"    {name}{suffix}: {descriptions.get(name, '')}".rstrip(": "))
    return "\n".join(lines)


@click.group("source", help="Observation sources.")
def command() -> None:
    pass


@command.command("list", help="List the installed observation sources and their config keys.")
@format_option(("toon", "json", "text"), None)
def list_sources(output_format: str | None) -> int:
    fmt = resolve_format(output_format)
    sources = load_registry(warn).list()
    entries = [describe_source(source, fmt == "toon") for source in sources]
    text_entries = [describe_source(source, False) for source in sources]
    emit(entries, fmt, lambda: sources_as_text(text_entries))
    return 0

"""The combined JSON Schema for MONITOR.md frontmatter, for editors and tools."""

from __future__ import annotations

from typing import Any

from agentmonitors.monitor.model import Frontmatter
from agentmonitors.sources.base import SourceRegistry, draft07_schema

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def generate_monitor_schema(registry: SourceRegistry) -> dict[str, Any]:
    """Draft-07 schema: the frontmatter model, with each source's config under ``watch``
    selected by ``watch.type`` through ``if``/``then``."""
    body = draft07_schema(Frontmatter)
    names = registry.names()
    watch = body["properties"]["watch"]
    watch["properties"]["type"] = {
        "type": "string",
        "enum": names,
        "description": "The observation source that watches for changes.",
    }
    conditionals = [
        {
            "if": {
                "properties": {
                    "watch": {"properties": {"type": {"const": source.name}}, "required": ["type"]}
                },
                "required": ["watch"],
            },
            "then": {"properties": {"watch": dict(source.scope_schema)}},
        }
        for source in registry.list()
    ]
    return {
        "$schema": DRAFT_07,
        **body,
        "title": "Agent Monitor Definition",
        "description": "YAML frontmatter of a MONITOR.md: what to watch and how to deliver it.",
        "allOf": conditionals,
    }

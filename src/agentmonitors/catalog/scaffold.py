"""``init``: monitor templates, scaffolding, and project bootstrap (.gitignore)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agentmonitors.catalog.presets import PRESETS, render_preset
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES, bundled_registry
from agentmonitors.sources.traits import Scaffold, ScaffoldSeed

# The bundled types (``init --type`` also takes an installed plugin's).
SOURCE_TYPES = BUNDLED_SOURCE_NAMES
# Ready-made monitors ``--type`` also takes (see catalog/presets/).
PRESET_TYPES = tuple(PRESETS)
DEFAULT_TYPE = "file-fingerprint"
DEFAULT_MONITOR_NAME = "my-monitor"
GITIGNORE_LINES = (".claude/*.local.*", "/.agentmonitors/")
MONITOR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
GENERIC_BODY = (
    "The source reported a change. Decide whether it affects the current task, and act\n"
    "on it before carrying on.\n"
)


class ScaffoldError(ValueError):
    """A scaffold request that cannot be honoured; nothing was written."""


def quote(value: str) -> str:
    """A YAML single-quoted scalar (safe for any text on one line)."""
    return "'" + value.replace("'", "''") + "'"


def readable_name(positional: str) -> str | None:
    """``watch-docs`` → ``Watch docs``; None when there is no word to use."""
    words = [word for word in re.split(r"[-_]+", positional) if word]
    if not words:
        return None
    first, *rest = words
    return " ".join([first[:1].upper() + first[1:], *rest])


def known_type(source_type: str, registry: SourceRegistry) -> bool:
    """Whether ``init --type`` takes ``source_type``: a registered source or a preset."""
    preset = PRESETS.get(source_type)
    return registry.has(source_type if preset is None else preset.source_type)


def type_choices(registry: SourceRegistry) -> list[str]:
    """Every ``--type`` value: the registered sources, then the presets."""
    return [*registry.names(), *PRESET_TYPES]


def unknown_type(source_type: str, registry: SourceRegistry) -> ScaffoldError:
    """The error for a ``--type`` that is neither a registered source nor a preset."""
    return ScaffoldError(
        f'Unknown --type "{source_type}". Choose one of: {", ".join(registry.names())}; '
        f"or a preset: {', '.join(PRESET_TYPES)}"
    )


def schema_scaffold(schema: Mapping[str, Any]) -> Scaffold:
    """A template for a source that has none of its own: its documented keys, commented."""
    properties = schema.get("properties")
    required = schema.get("required")
    required_keys = set(required) if isinstance(required, list) else set()
    lines: list[str] = []
    if isinstance(properties, Mapping) and properties:
        lines.append("  # This source's keys (see `agentmonitors source list`):\n")
        for key, spec in properties.items():
            note = "required" if key in required_keys else "optional"
            described = spec.get("description") if isinstance(spec, Mapping) else None
            text = " ".join(str(described).split()) if described else ""
            lines.append(f"  # {key}: ({note}) {text}".rstrip() + "\n")
    return Scaffold("".join(lines), GENERIC_BODY)


def render_template(
    source_type: str,
    *,
    name: str,
    urgency: str = "normal",
    patterns: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    registry: SourceRegistry | None = None,
) -> str:
    """The MONITOR.md text for a new monitor of ``source_type``.

    The source writes its part (its ``scaffold`` trait); ``registry`` defaults to the
    bundled sources.
    """
    registry = registry if registry is not None else bundled_registry()
    source = registry.get(source_type)
    if source is None:
        raise unknown_type(source_type, registry)
    seed = ScaffoldSeed(tuple(patterns or ()), tuple(command or ()))
    template = registry.traits(source_type).scaffold(seed)
    if not isinstance(template, Scaffold):
        template = schema_scaffold(source.scope_schema)
    header = f"---\nname: {quote(name)}\nwatch:\n  type: {source_type}\n"
    footer_urgency = (
        "# low: a reminder when the agent is idle; normal: a reminder at the next prompt;\n"
        "# high: the change itself, injected at the next prompt or tool call.\n"
        f"urgency: {urgency}\n---\n\n"
    )
    return header + template.watch + footer_urgency + template.body


def _seeded_by(flag: str, registry: SourceRegistry) -> str:
    """``it seeds watch.globs for file-fingerprint and watch.paths for incoming-changes``."""
    seeded = [
        f"watch.{key} for {name}"
        for name in registry.names()
        if (key := registry.traits(name).scaffold_seeds.get(flag)) is not None
    ]
    if not seeded:
        return "no installed source takes it"
    if len(seeded) == 1:
        return f"it seeds {seeded[0]} only"
    return f"it seeds {', '.join(seeded[:-1])} and {seeded[-1]}"


def _check_request(
    monitor_name: str,
    source_type: str,
    patterns: Sequence[str],
    command: Sequence[str],
    registry: SourceRegistry,
) -> None:
    if not MONITOR_NAME.match(monitor_name) or monitor_name == "MONITOR":
        raise ScaffoldError(
            f'Invalid monitor name "{monitor_name}": it becomes the folder name and the '
            "monitor id, so use letters, digits, '-', '_' or '.' and start with a letter or digit"
        )
    if not known_type(source_type, registry):
        raise unknown_type(source_type, registry)
    preset = PRESETS.get(source_type)
    # A preset's watch block is the preset: a seeded one would contradict its body.
    seeds = {} if preset is not None else registry.traits(source_type).scaffold_seeds
    reason = "a preset writes its own watch block; " if preset is not None else ""
    for flag, given in (("glob", patterns), ("command", command)):
        if given and flag not in seeds:
            raise ScaffoldError(
                f"--{flag} is not supported for --type {source_type} "
                f"({reason}{_seeded_by(flag, registry)})"
            )


@dataclass(frozen=True)
class ScaffoldResult:
    created: bool
    monitor_dir: str
    file_path: str
    # A preset's prerequisites, said after "Created monitor"; None for a source template.
    note: str | None = None


def scaffold_monitor(
    monitors_dir: str,
    monitor_name: str,
    source_type: str,
    *,
    display_name: str | None = None,
    urgency: str | None = None,
    patterns: Sequence[str] = (),
    command: Sequence[str] = (),
    registry: SourceRegistry | None = None,
) -> ScaffoldResult:
    """Write ``<monitors_dir>/<monitor_name>/MONITOR.md``; never overwrite one.

    ``registry`` (default: the bundled sources) holds the sources ``source_type`` may name.
    """
    registry = registry if registry is not None else bundled_registry()
    _check_request(monitor_name, source_type, patterns, command, registry)
    monitor_dir = os.path.join(monitors_dir, monitor_name)
    file_path = os.path.join(monitor_dir, "MONITOR.md")
    if os.path.lexists(file_path):
        return ScaffoldResult(False, monitor_dir, file_path)
    preset = PRESETS.get(source_type)
    if preset is not None:
        text = render_preset(preset, display_name=display_name, urgency=urgency)
    else:
        text = render_template(
            source_type,
            name=display_name or readable_name(monitor_name) or monitor_name,
            urgency=urgency or "normal",
            patterns=patterns,
            command=command,
            registry=registry,
        )
    os.makedirs(monitor_dir, exist_ok=True)
    # "x" mode: a file that appeared since the check above is never clobbered.
    try:
        with open(file_path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return ScaffoldResult(False, monitor_dir, file_path)
    return ScaffoldResult(True, monitor_dir, file_path, preset.needs if preset else None)


def ensure_gitignore(workspace: str) -> str:
    """Make sure ``.gitignore`` ignores the local state; ``created|appended|present``."""
    path = os.path.join(workspace, ".gitignore")
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            content = handle.read()
    except FileNotFoundError:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(GITIGNORE_LINES) + "\n")
        return "created"
    present = {line.strip() for line in content.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if not missing:
        return "present"
    newline = "\r\n" if "\r\n" in content else "\n"
    lead = newline if content and not content.endswith(("\n", "\r")) else ""
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(lead + newline.join(missing) + newline)
    return "appended"

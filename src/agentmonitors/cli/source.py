"""``agentmonitors source list|search|install|update|remove``"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

import click

from agentmonitors.cli.completion import complete_source_name
from agentmonitors.cli.output import (
    emit,
    format_option,
    print_document,
    print_error,
    report_error,
    resolve_format,
    warn,
)
from agentmonitors.sources.base import Source
from agentmonitors.sources.registry import load_registry


def _packages() -> ModuleType:
    """``sources/packages.py``, loaded by the commands that install, list or remove."""
    # Lazy: importlib.metadata and pip's plumbing are for these commands, not `source --help`.
    from agentmonitors.sources import packages

    return packages


def describe_source(source: Source) -> dict[str, Any]:
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
        "fieldDescriptions": descriptions,
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
    entries = [describe_source(source) for source in sources]
    emit(entries, fmt, lambda: sources_as_text(entries))
    return 0


# --------------------------------------------------------------------------- search


def _origin(source: Source, plugins: Mapping[str, Any]) -> str:
    plugin = plugins.get(source.name)
    return "bundled" if plugin is None else f"{plugin.distribution} {plugin.version}"


def _matches(entry: Mapping[str, Any], words: list[str]) -> bool:
    haystack = " ".join(
        [
            entry["name"],
            entry["description"] or "",
            *entry["configFields"],
            *(str(text) for text in entry["fieldDescriptions"].values()),
        ]
    ).lower()
    return all(word in haystack for word in words)


@command.command(
    "search",
    short_help="Search the bundled and installed sources.",
    help="Search the sources this installation has (bundled and installed plugins) by name, "
    "description or config key: each word of QUERY must match. Without QUERY, every source "
    "is listed.",
)
@click.argument("query", nargs=-1)
@format_option(("toon", "json", "text"), None)
def search(query: tuple[str, ...], output_format: str | None) -> int:
    packages = _packages()
    fmt = resolve_format(output_format)
    words = [word.lower() for word in query]
    plugins = {plugin.name: plugin for plugin in packages.installed_plugins()}
    found = []
    for source in load_registry(warn).list():
        entry = describe_source(source)
        if _matches(entry, words):
            found.append({**entry, "origin": _origin(source, plugins)})

    def text() -> str:
        if not found:
            lines = [f"No source matches {' '.join(query)!r}."]
        else:
            lines = [
                f"{entry['name']} ({entry['origin']}): {entry['description']}" for entry in found
            ]
        lines += [
            "",
            "Third-party sources are Python packages declaring an agentmonitors.sources entry "
            "point; add one with: agentmonitors source install <package>",
        ]
        return "\n".join(lines)

    emit(found, fmt, text)
    return 0


# ----------------------------------------------------------------- install / update / remove


def _sources_phrase(verb: str, items: list[str]) -> str:
    noun = "source" if len(items) == 1 else "sources"
    return f"{verb} {noun} {', '.join(items)}"


def _change_text(change: Any, verb: str) -> str:
    """The whole run in one line, e.g. ``Added source a (dist 1.0); updated source b (…)``."""
    groups = [
        ("added", [f"{p.name} ({p.distribution} {p.version})" for p in change.added]),
        (
            "updated",
            [
                f"{p.name} ({p.distribution} {before} -> {p.version})"
                for p, before in change.upgraded
            ],
        ),
        ("removed", [f"{p.name} ({p.distribution} {p.version})" for p in change.removed]),
    ]
    phrases = [_sources_phrase(name, items) for name, items in groups if items]
    if not phrases:
        return f"No source was {verb}."
    line = "; ".join(phrases)
    return line[0].upper() + line[1:]


def _pip_command(
    arguments: list[str],
    verb: str,
    output_format: str,
    *,
    verbose: bool = False,
    expect_sources: bool = False,
) -> int:
    packages = _packages()
    # pip's own output is noise on success; a failure quotes pip's error lines anyway.
    echo = (lambda line: click.echo(line, err=True)) if verbose else None
    try:
        change = packages.pip_change(arguments, echo)
    except packages.PackageError as error:
        return report_error(str(error), output_format == "json")
    if not print_document(change.to_json(), output_format):
        click.echo(_change_text(change, verb))
    if expect_sources and not (change.added or change.upgraded) and change.other:
        return print_error(
            f"{', '.join(change.other)} installed, but declares no agentmonitors.sources entry "
            "point, so no source was added."
        )
    # A new plugin that cannot load is reported the way every command reports it.
    load_registry(warn)
    return 0


VERBOSE_OPTION = click.option(
    "--verbose", "-v", is_flag=True, help="Show pip's own output (on stderr) as it runs."
)


@command.command(
    "install",
    short_help="Install source packages with pip.",
    help="Install source packages with pip into the environment agentmonitors runs in "
    "(any pip requirement: a name, a version range, a path or a URL).",
)
@click.argument("requirements", nargs=-1, required=True)
@click.option("--upgrade", is_flag=True, help="Upgrade packages that are already installed.")
@VERBOSE_OPTION
@format_option(("text", "json", "toon"), "text")
def install(requirements: tuple[str, ...], upgrade: bool, verbose: bool, output_format: str) -> int:
    arguments = ["install", *(["--upgrade"] if upgrade else []), *requirements]
    return _pip_command(arguments, "added", output_format, verbose=verbose, expect_sources=True)


@command.command(
    "update",
    short_help="Upgrade the packages behind installed sources.",
    help="Upgrade the packages that provide the sources NAMES (without NAMES: every installed"
    " plugin's package).",
)
@click.argument("names", nargs=-1, shell_complete=complete_source_name)
@VERBOSE_OPTION
@format_option(("text", "json", "toon"), "text")
def update(names: tuple[str, ...], verbose: bool, output_format: str) -> int:
    packages = _packages()
    as_json = output_format == "json"
    try:
        if names:
            dists = sorted(packages.distributions_for(list(names)))
        else:
            dists = sorted({plugin.distribution for plugin in packages.installed_plugins()})
    except packages.PackageError as error:
        return report_error(str(error), as_json)
    if not dists:
        if not print_document({"added": [], "upgraded": [], "removed": []}, output_format):
            click.echo("No plugin sources are installed; nothing to update.")
        return 0
    return _pip_command(["install", "--upgrade", *dists], "updated", output_format, verbose=verbose)


@command.command(
    "remove",
    short_help="Uninstall the packages behind sources.",
    help="Uninstall the packages that provide these sources (with every source they provide).",
)
@click.argument("names", nargs=-1, required=True, shell_complete=complete_source_name)
@VERBOSE_OPTION
@format_option(("text", "json", "toon"), "text")
def remove(names: tuple[str, ...], verbose: bool, output_format: str) -> int:
    packages = _packages()
    as_json = output_format == "json"
    try:
        chosen = packages.distributions_for(list(names))
    except packages.PackageError as error:
        return report_error(str(error), as_json)
    for dist, provided in chosen.items():
        extra = sorted(p.name for p in provided if p.name not in names)
        if extra:
            warn(f"{dist} also provides {', '.join(extra)}; those sources go too.")
    return _pip_command(
        ["uninstall", "--yes", *sorted(chosen)], "removed", output_format, verbose=verbose
    )

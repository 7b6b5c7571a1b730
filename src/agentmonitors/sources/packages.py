"""Installing, updating and removing third-party source packages.

A third-party source is a Python distribution declaring an ``agentmonitors.sources``
entry point, so managing one is managing a distribution in the environment this
``agentmonitors`` runs in. That is pip's job: these functions run ``python -m pip`` with
this interpreter and work out which sources a change added, upgraded or removed by
comparing the installed distributions before and after.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import distributions

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.paths import neutral_cwd, python_command
from agentmonitors.sources.plugins import plugin_entry_points
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES


class PackageError(Exception):
    """A source name or a pip run that cannot do what was asked; the message says why."""


@dataclass(frozen=True)
class PluginSource:
    """One installed plugin source and the distribution that provides it."""

    name: str
    distribution: str
    version: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "distribution": self.distribution, "version": self.version}


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def installed_plugins() -> list[PluginSource]:
    """Every plugin entry point with its distribution, read fresh from disk."""
    importlib.invalidate_caches()
    found: list[PluginSource] = []
    for point in plugin_entry_points():
        dist = point.dist
        if dist is None:
            continue
        found.append(PluginSource(point.name, str(dist.metadata["Name"]), dist.version))
    return found


def installed_distributions() -> dict[str, str]:
    """Normalized distribution name to version, for everything installed here."""
    importlib.invalidate_caches()
    versions: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(_normalized(str(name)), dist.version)
    return versions


def distributions_for(names: Sequence[str]) -> dict[str, list[PluginSource]]:
    """The distribution behind each named source (all of its sources, to say what goes).

    ``PackageError`` for a bundled source or a name no installed plugin provides.
    """
    plugins = installed_plugins()
    by_source = {plugin.name: plugin for plugin in plugins}
    chosen: dict[str, list[PluginSource]] = {}
    for name in names:
        if name in BUNDLED_SOURCE_NAMES:
            raise PackageError(
                f'"{name}" is bundled with agentmonitors; it is updated or removed with '
                "agentmonitors itself."
            )
        plugin = by_source.get(name)
        if plugin is None:
            known = ", ".join(sorted(by_source)) or "none"
            raise PackageError(
                f'No installed plugin provides source "{name}" (installed: {known}).'
            )
        chosen[plugin.distribution] = [
            other for other in plugins if other.distribution == plugin.distribution
        ]
    return chosen


def pip_available() -> bool:
    return importlib.util.find_spec("pip") is not None


def pip_failure_summary(output: Sequence[str]) -> str:
    """What pip said went wrong: its ``ERROR:`` lines, else its last line."""
    errors = [line.removeprefix("ERROR:").strip() for line in output if line.startswith("ERROR:")]
    if errors:
        return " ".join(errors)
    lines = [line.strip() for line in output if line.strip()]
    return lines[-1] if lines else "pip printed nothing"


def run_pip(arguments: Sequence[str], echo: Callable[[str], None] | None = None) -> None:
    """Run pip with this interpreter.

    ``echo`` gets each line of pip's output as it comes (the verbose mode); without
    it the output is kept, and a failure's ``PackageError`` quotes what pip said.
    """
    if not pip_available():
        raise PackageError(
            f"pip is not available to {sys.executable}. Install the package with the tool "
            "that installed agentmonitors instead (for example: pipx inject agentmonitors "
            "<package>, or uv tool install agentmonitors --with <package>)."
        )
    # pip runs in a folder of ours with -P, so a project's own `pip/` or any module
    # it holds cannot stand in for pip's (docs/architecture.md, "Processes we start");
    # a requirement naming a path here is handed over as an absolute one.
    command = python_command(
        "-m", "pip", *(_absolute_if_path(item) for item in arguments), "--disable-pip-version-check"
    )
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        cwd=neutral_cwd(),
    )
    assert process.stdout is not None
    output: list[str] = []
    with process.stdout:
        for raw in process.stdout:
            line = raw.rstrip("\n")
            output.append(line)
            if echo is not None:
                echo(line)
    code = process.wait()
    if code != 0:
        detail = (
            "see its output above."
            if echo is not None
            else f"{pip_failure_summary(output)} (run again with --verbose for pip's output)"
        )
        raise PackageError(f"pip {arguments[0]} failed (exit code {code}): {detail}")


def _absolute_if_path(argument: str) -> str:
    """``argument`` as pip would read it here, for a pip running elsewhere.

    pip takes a requirement for a path when it has a separator or starts with a dot,
    or names an existing file; everything else (names, version ranges, URLs, options)
    passes as it is.
    """
    if argument.startswith("-") or "://" in argument:
        return argument
    looks_like_path = os.sep in argument or argument.startswith(".")
    if looks_like_path or os.path.isfile(argument):
        return os.path.abspath(argument)
    return argument


@dataclass(frozen=True)
class Change:
    """What a pip run did to the installed sources."""

    added: list[PluginSource]
    upgraded: list[tuple[PluginSource, str]]  # (now, version before)
    removed: list[PluginSource]
    # Distributions that changed but provide no source (dependencies, or a package that
    # is not a source at all).
    other: list[str]

    def to_json(self) -> dict[str, object]:
        return {
            "added": [plugin.to_json() for plugin in self.added],
            "upgraded": [
                {**plugin.to_json(), "previousVersion": before} for plugin, before in self.upgraded
            ],
            "removed": [plugin.to_json() for plugin in self.removed],
        }


def change_between(
    plugins_before: Iterable[PluginSource],
    dists_before: dict[str, str],
    plugins_after: Iterable[PluginSource],
    dists_after: dict[str, str],
) -> Change:
    before = {plugin.name: plugin for plugin in plugins_before}
    after = {plugin.name: plugin for plugin in plugins_after}
    added = [plugin for name, plugin in after.items() if name not in before]
    upgraded = [
        (plugin, before[name].version)
        for name, plugin in after.items()
        if name in before and before[name].version != plugin.version
    ]
    removed = [plugin for name, plugin in before.items() if name not in after]
    with_sources = {
        _normalized(plugin.distribution) for plugin in [*before.values(), *after.values()]
    }
    other = sorted(
        name
        for name in set(dists_before) | set(dists_after)
        if dists_before.get(name) != dists_after.get(name) and name not in with_sources
    )
    return Change(added, upgraded, removed, other)


def pip_change(arguments: Sequence[str], echo: Callable[[str], None] | None = None) -> Change:
    """Run pip and report what it changed among the installed sources."""
    plugins_before, dists_before = installed_plugins(), installed_distributions()
    run_pip(arguments, echo)
    return change_between(
        plugins_before, dists_before, installed_plugins(), installed_distributions()
    )

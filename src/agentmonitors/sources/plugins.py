"""Third-party sources: the installed ``agentmonitors.sources`` entry points.

A third-party source is an installed distribution that declares an entry point in
the ``agentmonitors.sources`` group. The entry point names either a source object or
a zero-argument factory (a class, a function) that returns one. Plugins load after
the bundled sources, ordered by distribution name then entry-point name. A plugin
that fails to load, is not a usable source, or reuses a name already registered is
reported and skipped, never fatal, and never displaces a bundled source.

The registry (``sources/registry.py``) imports this module only when a name that is
not bundled, or the full list, is first asked for: reading the installed
distributions' metadata costs a command that only uses bundled sources more than the
rest of its imports.
"""

from __future__ import annotations

import contextlib
import os
import re
import site
import sysconfig
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.protocol import Describes, Observes
from agentmonitors.sources.traits import traits_problem

ENTRY_POINT_GROUP = "agentmonitors.sources"

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class PluginProblem:
    """A plugin entry point that was skipped, and why."""

    entry_point: str
    value: str
    message: str

    def __str__(self) -> str:
        return f'Source plugin "{self.entry_point}" ({self.value}) skipped: {self.message}'


def plugin_entry_points(workspace: str | None = None) -> list[EntryPoint]:
    """The installed ``agentmonitors.sources`` entry points, in a stable order.

    Sorted by distribution name, then entry-point name: the order a directory lists
    its distributions in is not stable across machines, and this order decides which
    of two plugins claiming one name wins. A distribution whose metadata lies in the
    current folder or ``workspace`` is left out (see :func:`split_entry_points`).
    """
    return split_entry_points(workspace)[0]


def split_entry_points(
    workspace: str | None = None,
) -> tuple[list[EntryPoint], list[PluginProblem]]:
    """The plugin entry points to load, and those left out because a project holds them.

    A process run in a project (``python -m agentmonitors`` puts the current folder
    first on ``sys.path``, and so does ``PYTHONPATH=.``) would otherwise load any
    ``*.dist-info`` a repository commits, and with it the repository's code. Plugins
    come from the installed environment only: its site-packages folders count even
    when they sit inside the project (a project's own ``.venv``).
    """

    def order(point: EntryPoint) -> tuple[str, str]:
        dist = point.dist
        name = dist.metadata["Name"] if dist is not None else None
        return (str(name or "").lower().replace("_", "-"), point.name)

    roots = _project_roots(workspace)
    installed = _installed_folders()
    kept: list[EntryPoint] = []
    skipped: list[PluginProblem] = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=order):
        folder = _project_folder_of(point, roots, installed)
        if folder is None:
            kept.append(point)
        else:
            skipped.append(
                PluginProblem(
                    point.name,
                    point.value,
                    f"its package metadata is in {folder}, inside the project folder; "
                    "source plugins load only from the installed environment "
                    "(`agentmonitors source install <package>`)",
                )
            )
    return kept, skipped


def _project_roots(workspace: str | None) -> list[str]:
    roots = [workspace] if workspace else []
    with contextlib.suppress(OSError):
        roots.append(os.getcwd())
    return [os.path.realpath(root) for root in roots]


def _installed_folders() -> set[str]:
    """The interpreter's own site-packages folders (the user's included)."""
    folders = {sysconfig.get_paths().get(key, "") for key in ("purelib", "platlib")}
    with contextlib.suppress(AttributeError):
        folders.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        folders.add(site.getusersitepackages())
    return {os.path.realpath(folder) for folder in folders if folder}


def _project_folder_of(point: EntryPoint, roots: list[str], installed: set[str]) -> str | None:
    """The folder holding ``point``'s distribution when that is inside a project root."""
    dist = point.dist
    if dist is None:
        return None
    try:
        folder = os.path.realpath(str(dist.locate_file("")))
    except (OSError, NotImplementedError, TypeError, ValueError):
        return None
    if folder in installed:
        return None
    for root in roots:
        if folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
            return folder
    return None


def _instantiate(loaded: Any) -> Any:
    """The source an entry point names: the object itself, or what its factory returns."""
    if isinstance(loaded, type):
        return loaded()
    if isinstance(loaded, Observes):
        return loaded
    if callable(loaded):
        return loaded()
    return loaded


def source_problem(source: Any) -> str | None:
    """Why ``source`` cannot be registered, or None when it looks like a usable source."""
    name = getattr(source, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        return f"its name must be a kebab-case string, got {name!r}"
    # The protocol's members a source must define itself (``Observes``, ``Describes``);
    # the rest take their defaults (``traits_problem`` checks those it defines).
    if not isinstance(source, Observes) or not callable(source.observe):
        return f'source "{name}" has no observe() method'
    if not isinstance(getattr(source, "description", ""), str):
        return f'source "{name}" has a description that is not a string'
    schema = source.scope_schema if isinstance(source, Describes) else None
    if not isinstance(schema, Mapping):
        return f'source "{name}" has no scope_schema mapping'
    # Lazy: jsonschema costs about 90 ms; only a plugin source is checked this way.
    from jsonschema import Draft7Validator, SchemaError

    try:
        Draft7Validator.check_schema(dict(schema))
    except SchemaError as error:
        return f'source "{name}" has an invalid scope_schema: {error.message}'
    return traits_problem(source)


def register_plugins(
    registry: SourceRegistry,
    points: Iterable[EntryPoint] | None = None,
    *,
    workspace: str | None = None,
) -> list[PluginProblem]:
    """Register every plugin source ``registry`` can take; the problems of the rest."""
    problems: list[PluginProblem] = []
    if points is None:
        points, problems = split_entry_points(workspace)
    for point in points:

        def skip(message: str, point: EntryPoint = point) -> None:
            problems.append(PluginProblem(point.name, point.value, message))

        try:
            source = _instantiate(point.load())
            problem = source_problem(source)
        except Exception as error:
            skip(f"failed to load: {type(error).__name__}: {error}")
            continue
        if problem is not None:
            skip(problem)
            continue
        try:
            registry.register(source)
        except ValueError as error:
            skip(str(error))
    return problems

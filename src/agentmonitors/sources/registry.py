"""The source registry: the five bundled sources, then any installed plugins.

A third-party source is an installed distribution that declares an entry point in
the ``agentmonitors.sources`` group. The entry point names either a source object or
a zero-argument factory (a class, a function) that returns one. Plugins load after
the bundled sources, ordered by distribution name then entry-point name. A plugin
that fails to load, is not a usable source, or reuses a name already registered is
reported and skipped, never fatal, and never displaces a bundled source.

Nothing is imported up front: a bundled source's module loads when a monitor (or a
command listing every source) first asks for it, and the plugins are looked up when a
name that is not bundled, or the full list, is first asked for.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.base import Describes, Observes, Source, SourceRegistry
from agentmonitors.sources.traits import traits_problem

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

log = get_logger("agentmonitors.sources")

ENTRY_POINT_GROUP = "agentmonitors.sources"

# Each bundled source by name: its module and class, imported when first asked for
# (api-poll alone brings in an HTTP client that a folder of file monitors never needs).
BUNDLED_SOURCES = {
    "file-fingerprint": ("agentmonitors.sources.file_fingerprint", "FileFingerprintSource"),
    "api-poll": ("agentmonitors.sources.api_poll", "ApiPollSource"),
    "command-poll": ("agentmonitors.sources.command_poll", "CommandPollSource"),
    "schedule": ("agentmonitors.sources.schedule", "ScheduleSource"),
    "incoming-changes": ("agentmonitors.sources.incoming_changes", "IncomingChangesSource"),
}
BUNDLED_SOURCE_NAMES = tuple(BUNDLED_SOURCES)

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _bundled(name: str) -> Callable[[], Source]:
    module_name, class_name = BUNDLED_SOURCES[name]

    def load() -> Source:
        source: Source = getattr(importlib.import_module(module_name), class_name)()
        return source

    return load


def bundled_registry(
    complete: Callable[[SourceRegistry], None] | None = None,
) -> SourceRegistry:
    """A registry holding the five bundled sources (each imported on first use), then
    whatever ``complete`` registers when a name beyond them or the full list is wanted."""
    return SourceRegistry({name: _bundled(name) for name in BUNDLED_SOURCES}, complete)


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

    # Here, not at the top: reading the installed distributions' metadata costs a
    # command that only uses bundled sources more than the rest of its imports.
    from importlib.metadata import entry_points

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
    import site
    import sysconfig

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
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import SchemaError

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


def load_registry(
    on_problem: Callable[[str], None] | None = None,
    points: Iterable[EntryPoint] | None = None,
    *,
    workspace: str | None = None,
) -> SourceRegistry:
    """The bundled sources plus every installed plugin source.

    The plugins are looked up only when first needed: a name that is not bundled, or
    the full list (``names()``, ``list()``). Each skipped plugin is then passed to
    ``on_problem`` as one line (default: logged as a warning), those found inside
    ``workspace`` or the current folder included.
    """
    report = on_problem if on_problem is not None else log.warning

    def add_plugins(registry: SourceRegistry) -> None:
        for problem in register_plugins(registry, points, workspace=workspace):
            report(str(problem))

    return bundled_registry(add_plugins)

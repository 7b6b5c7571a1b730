"""The source registry: the bundled sources, then any installed plugins.

The bundled sources are the ``BUNDLED_SOURCES`` table below; each lives in its own
folder laid out as a plugin would be (``docs/architecture.md``, "Sources"). Third-party
sources come from the installed ``agentmonitors.sources`` entry points
(``sources/plugins.py``), after the bundled ones and never displacing one.

Nothing is imported up front: a bundled source's module loads when a monitor (or a
command listing every source) first asks for it, and the plugins are looked up when a
name that is not bundled, or the full list, is first asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.sources.base import SourceRegistry, load_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from agentmonitors.sources.protocol import Source

log = get_logger("agentmonitors.sources")

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

# Where each bundled source's approval is read without importing the source (``validate``
# asks it of every project monitor): ``module:function``, or None for a source that needs
# none. Each source's ``approval`` is the same function (tests/sources/test_light_approval.py).
BUNDLED_APPROVALS: dict[str, str | None] = {
    "file-fingerprint": "agentmonitors.sources.reach:glob_approval",
    "api-poll": "agentmonitors.sources.api_poll.traits:config_approval",
    "command-poll": "agentmonitors.sources.command_poll.approval:approval",
    "schedule": None,
    "incoming-changes": "agentmonitors.sources.incoming_changes.approval:approval",
}


def _bundled(name: str) -> Callable[[], Source]:
    module_name, class_name = BUNDLED_SOURCES[name]

    def load() -> Source:
        source: Source = getattr(load_module(module_name), class_name)()
        return source

    return load


def bundled_registry(
    complete: Callable[[SourceRegistry], None] | None = None,
) -> SourceRegistry:
    """A registry holding the bundled sources (each imported on first use), then
    whatever ``complete`` registers when a name beyond them or the full list is wanted."""
    return SourceRegistry(
        {name: _bundled(name) for name in BUNDLED_SOURCES}, complete, BUNDLED_APPROVALS
    )


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
        # Lazy: reading the installed distributions' metadata costs 20 ms; a command
        # that only uses bundled sources never gets here.
        from agentmonitors.sources.plugins import register_plugins

        for problem in register_plugins(registry, points, workspace=workspace):
            report(str(problem))

    return bundled_registry(add_plugins)

"""The registry of bundled sources, in their canonical order."""

from __future__ import annotations

from agentmonitors.sources.api_poll import ApiPollSource
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.command_poll import CommandPollSource
from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.incoming_changes import IncomingChangesSource
from agentmonitors.sources.schedule import ScheduleSource

BUNDLED_SOURCE_NAMES = (
    "file-fingerprint",
    "api-poll",
    "command-poll",
    "schedule",
    "incoming-changes",
)


def bundled_registry() -> SourceRegistry:
    """A registry holding the five bundled sources."""
    registry = SourceRegistry()
    for source in (
        FileFingerprintSource(),
        ApiPollSource(),
        CommandPollSource(),
        ScheduleSource(),
        IncomingChangesSource(),
    ):
        registry.register(source)
    return registry

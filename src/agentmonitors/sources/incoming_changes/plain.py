"""incoming-changes's watch block as observing reads it, with the standard library.

The pydantic model in ``incoming_changes/config.py`` validates and describes the block;
this module reads a validated block into :class:`IncomingChangesSettings` without it (see
``sources/plain_config.py``), so a tick never loads pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources import plain_config as plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class IncomingChangesSettings:
    """A validated watch block as observing reads it (the model's values, standard library)."""

    paths: list[str]
    branch: str
    cwd: str | None
    interval: str


def _pathspecs(value: Any) -> list[str]:
    paths = plain.texts(value)
    if not paths or any(not path.strip() for path in paths):
        raise plain.Unexpected
    return paths


def plain_config(config: Mapping[str, Any]) -> IncomingChangesSettings:
    """``config`` read without its model; ``Unexpected`` for anything unsure."""
    config = plain.block(config)
    if "paths" not in config:
        raise plain.Unexpected
    return IncomingChangesSettings(
        paths=_pathspecs(config["paths"]),
        branch=plain.absent_as(config, "branch", "HEAD", plain.non_blank),
        cwd=plain.absent_as(config, "cwd", None, plain.optional_text),
        interval=plain.absent_as(config, "interval", "30s", plain.duration),
    )

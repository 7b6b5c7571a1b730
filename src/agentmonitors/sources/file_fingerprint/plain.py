"""file-fingerprint's watch block as observing reads it, with the standard library.

The pydantic model in ``file_fingerprint/config.py`` validates and describes the block;
this module reads a validated block into :class:`FileFingerprintSettings` without it (see
``sources/plain_config.py``), so a tick never loads pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources import plain_config as plain


@dataclass(frozen=True)
class FileFingerprintSettings:
    """A validated watch block as observing reads it (the model's values, standard library)."""

    globs: list[str]
    ignore: list[str]
    cwd: str | None
    interval: str


def plain_config(config: Mapping[str, Any]) -> FileFingerprintSettings:
    """``config`` read without its model; ``Unexpected`` for anything unsure."""
    config = plain.block(config)
    if "globs" not in config:
        raise plain.Unexpected
    return FileFingerprintSettings(
        globs=plain.glob_patterns(config["globs"]),
        ignore=plain.absent_as(config, "ignore", [], plain.optional_glob_patterns),
        cwd=plain.absent_as(config, "cwd", None, plain.optional_text),
        interval=plain.absent_as(config, "interval", "30s", plain.duration),
    )

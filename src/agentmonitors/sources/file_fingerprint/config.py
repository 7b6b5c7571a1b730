"""file-fingerprint's config: the ``watch`` block as a pydantic model.

Loaded only to validate or to describe the block (its JSON Schema); observing reads a
validated block with the standard library (``FileFingerprintSettings``).
"""

from __future__ import annotations

from pydantic import Field

from agentmonitors.monitor.fields import Duration, GlobPatterns, OptionalGlobPatterns
from agentmonitors.sources.base_config import SourceConfig


class FileFingerprintConfig(SourceConfig):
    globs: GlobPatterns = Field(
        description="Glob pattern, or list of patterns OR-ed together, relative to cwd "
        '(e.g. "docs/**/*.md"). ** crosses folders, {a,b} picks alternatives; dotfiles '
        "match only when named.",
    )
    ignore: OptionalGlobPatterns = Field(
        default_factory=list,
        description="Pattern(s) removed from what globs matched; same base as globs.",
    )
    cwd: str | None = Field(
        default=None,
        description="Folder the globs are relative to: the workspace root when omitted; a "
        "relative path resolves under the workspace root, an absolute one is used as-is.",
    )
    interval: Duration = Field(
        default="30s", description="How often the files are re-hashed as a safety net."
    )

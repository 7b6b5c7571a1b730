"""What file-fingerprint says about itself beyond observing (see ``sources/traits.py``).

Kept apart from the observing code in ``file_fingerprint/__init__.py``; its source class takes
these as class attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.sources.traits import FileHints, Scaffold, ScaffoldSeed, quoted_list

BASELINE_NOTES = (
    "In production, the agent process keeps running between observations, so file"
    " changes are detected across polls.",
    "This test command verifies that the source can read and fingerprint your files successfully.",
)

SCAFFOLD_SEEDS = {"glob": "globs"}


def scaffold(seed: ScaffoldSeed) -> Scaffold:
    globs = list(seed.patterns) if seed.patterns else ["**/*.ts"]
    return Scaffold(
        watch=(
            "  # Files to fingerprint, relative to the project root. ** crosses folders,\n"
            "  # {a,b} picks alternatives; dotfiles only match when named.\n"
            f"  globs:\n{quoted_list(globs)}\n"
            "  # Optional: patterns to leave out, and how often to re-hash as a safety net.\n"
            "  # ignore:\n  #   - '**/node_modules/**'\n  # interval: 30s\n"
        ),
        body=(
            "A watched file was created, changed or deleted. Read the change, decide whether\n"
            "it affects the current task, and act on it before carrying on.\n"
        ),
    )


def file_hints(config: Mapping[str, Any], workspace: str) -> FileHints:
    """Events under its globs' folders that its globs (or a folder, or a deletion) match."""
    # Imported here: only the daemon watches files, and it is the only caller.
    from agentmonitors.sources.file_hints import glob_file_hints

    return glob_file_hints(config, workspace)

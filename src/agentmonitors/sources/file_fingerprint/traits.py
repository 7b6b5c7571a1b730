"""What file-fingerprint says about itself beyond observing (see ``sources/traits.py``).

Kept apart from the observing code in ``file_fingerprint/__init__.py``; its source class takes
these as class attributes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from agentmonitors.sources.file_change import FileTrigger, TriggerProblem, literal_trigger
from agentmonitors.sources.file_globs import compile_patterns, matched_files, resolve_base
from agentmonitors.sources.traits import FileHints, Scaffold, ScaffoldSeed, quoted_list

BASELINE_NOTES = (
    "In production, the agent process keeps running between observations, so file"
    " changes are detected across polls.",
    "This test command verifies that the source can read and fingerprint your files successfully.",
)

SCAFFOLD_SEEDS = {"glob": "globs"}

# The scratch file ``verify`` creates is named ``agentmonitors-verify-<token><ext>``.
SCRATCH_PREFIX = "agentmonitors-verify-"
_EXTENSION = re.compile(r"\*(\.[A-Za-z0-9_.-]+)$")


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
    # Lazy: file_hints brings asyncio (tens of ms); only the daemon, which watches, calls it.
    from agentmonitors.sources.file_hints import glob_file_hints

    return glob_file_hints(config, workspace)


def _patterns(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _base(config: Mapping[str, Any], workspace: str) -> str:
    cwd = config.get("cwd")
    return resolve_base(cwd if isinstance(cwd, str) else None, workspace)


def target_problem(config: Mapping[str, Any], workspace: str) -> str | None:
    """``doctor``: globs that match no file (a typo, or files not made yet)."""
    base = _base(config, workspace)
    globs = _patterns(config.get("globs"))
    try:
        files = matched_files(
            compile_patterns(globs, base), compile_patterns(_patterns(config.get("ignore")), base)
        )
    except (OSError, ValueError):
        return None
    if files:
        return None
    return f"its globs ({', '.join(globs)}) match no file under {base}"


def verify_trigger(config: Mapping[str, Any], workspace: str) -> FileTrigger:
    """``verify``'s change: a scratch file ``agentmonitors-verify-<token><ext>`` in the
    first glob's literal folder or, for a glob naming one file, that file created (then
    deleted) or edited (then restored byte for byte, with its times)."""
    globs = _patterns(config.get("globs", config.get("paths")))
    base = _base(config, workspace)
    try:
        patterns = compile_patterns(globs[:1], base)
    except ValueError as error:
        raise TriggerProblem("setup", str(error)) from None
    if not patterns:
        raise TriggerProblem("setup", "the monitor names no glob to trigger")
    pattern = patterns[0]
    if pattern.is_literal:
        return literal_trigger(pattern.root)
    folder = pattern.root
    if not os.path.isdir(folder):
        raise TriggerProblem(
            "no-files-matched",
            f'glob "{pattern.source}" matches no file: its folder '
            f"{os.path.relpath(folder, workspace)} does not exist",
        )
    found = _EXTENSION.search(pattern.source.rsplit("/", 1)[-1])
    extension = found.group(1) if found else ".txt"
    path = os.path.join(folder, f"{SCRATCH_PREFIX}{os.urandom(4).hex()}{extension}")
    if not pattern.matches(path):
        raise TriggerProblem(
            "setup",
            f'cannot name a scratch file that glob "{pattern.source}" matches; '
            "pass --trigger-cmd '<sh>' to make a change yourself",
        )
    return FileTrigger(path=path, created=True)

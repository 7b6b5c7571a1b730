"""What incoming-changes says about itself beyond observing (see ``sources/traits.py``).

Kept apart from the observing code in ``incoming_changes/source.py``; its source
class takes these as class attributes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from typing import Any

from agentmonitors.sources.file_globs import resolve_base
from agentmonitors.sources.traits import Scaffold, ScaffoldSeed, quoted_list

SCAFFOLD_SEEDS = {"glob": "paths"}

# How long ``doctor`` lets ``git rev-parse`` take before calling the folder unreadable.
GIT_TIMEOUT_S = 5.0


def scaffold(seed: ScaffoldSeed) -> Scaffold:
    paths = list(seed.patterns) if seed.patterns else ["docs/specs/**"]
    return Scaffold(
        watch=(
            "  # Git pathspecs: report files under these that change whenever the branch\n"
            "  # moves (a pull, a merge, a rebase or a local commit).\n"
            f"  paths:\n{quoted_list(paths)}\n"
            "  # The branch to follow; by default HEAD, whatever is checked out.\n"
            "  # branch: main\n"
        ),
        body=(
            "Files under the watched paths changed in the latest update of the branch.\n"
            "Summarise what changed and whether it affects the current work.\n"
        ),
    )


def target_problem(config: Mapping[str, Any], workspace: str) -> str | None:
    """``doctor``: a branch that does not exist, or a folder that is no repository."""
    branch = config.get("branch", "HEAD")
    cwd = config.get("cwd")
    repo = resolve_base(cwd if isinstance(cwd, str) else None, workspace)
    if not isinstance(branch, str):
        return None
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{branch}^{{commit}}"],
            cwd=repo,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return f"git cannot run in {repo}"
    if done.returncode == 0:
        return None
    if done.returncode == 1 or not done.stderr.strip():
        return f'its branch "{branch}" does not exist in {repo}'
    return f"{repo} is not a git repository"

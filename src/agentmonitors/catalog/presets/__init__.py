"""Presets: ready-made monitors that ``init --type <preset>`` writes as they are.

A preset is not a source type. It is a finished ``MONITOR.md`` over a bundled source,
kept beside this module as ``<preset>.md`` so what ``init`` writes can be read (and
reviewed) as the file it becomes. Adding a preset is adding its template here and one
:class:`Preset` line to :data:`PRESETS`; nothing else branches on a preset's name.

Unlike a source's template, a preset keeps its own ``name:`` (the curated name is part
of the product); ``--name`` and ``--urgency`` still replace those two lines, and the
watch block is never seeded: the command is the preset.

- ``pr-review``: the pull requests in this repository waiting for your review.
- ``my-prs``: your own pull requests that need something from you (CI failing, changes
  requested, draft, merged or closed in the last 6 hours).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Final

from agentmonitors.fastpath.lean_dataclass import dataclass

_NAME_LINE = re.compile(r"^name: .*$", re.MULTILINE)
_URGENCY_LINE = re.compile(r"^urgency: .*$", re.MULTILINE)


@dataclass(frozen=True)
class Preset:
    """One ``init --type`` preset: its template ``<name>.md`` is over ``source_type``."""

    name: str
    source_type: str
    summary: str
    # What ``init`` prints instead of "edit it": what the preset needs to run.
    needs: str

    def template(self) -> str:
        """The ``MONITOR.md`` text exactly as shipped."""
        return resources.files(__name__).joinpath(f"{self.name}.md").read_text(encoding="utf-8")


_GH_NEEDS = (
    "It runs gh and jq from the daemon's PATH, in this project's root: install both, "
    "sign in with `gh auth login`, and keep the monitor in a GitHub checkout. Until then "
    "it reports `Command failing` with the fix."
)

PRESETS: Final[dict[str, Preset]] = {
    preset.name: preset
    for preset in (
        Preset(
            "pr-review",
            "command-poll",
            "PRs in this repository awaiting your review (gh)",
            _GH_NEEDS,
        ),
        Preset(
            "my-prs",
            "command-poll",
            "your own PRs that need something from you (gh)",
            _GH_NEEDS,
        ),
    )
}


def _yaml_quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def render_preset(preset: Preset, *, display_name: str | None, urgency: str | None) -> str:
    """The preset's ``MONITOR.md`` with the ``name:`` / ``urgency:`` seeds applied."""
    text = preset.template()
    _, frontmatter, body = text.split("---\n", 2)
    if display_name is not None:
        # A function, not a replacement string: the name may hold backslashes.
        line = f"name: {_yaml_quote(display_name)}"
        frontmatter = _NAME_LINE.sub(lambda _: line, frontmatter, count=1)
    if urgency is not None:
        frontmatter = _URGENCY_LINE.sub(f"urgency: {urgency}", frontmatter, count=1)
    return f"---\n{frontmatter}---\n{body}"

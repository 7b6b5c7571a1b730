"""The incoming-changes source: files under git pathspecs that changed when a branch moved.

Each ``observe`` resolves ``branch`` (default ``HEAD``) in the repository at ``cwd``
(default: the workspace root) and compares it with the commit stored in the state
(``{"ref": <sha>}``, plus ``"head"`` when tracking ``HEAD``). Any advance — pull,
merge, fast-forward, local commit — that touches ``paths`` yields one observation per
changed file; the remote is never contacted. The cases around it:

- no stored commit: baseline, nothing reported;
- ``branch`` does not resolve (not created yet, deleted, unborn ``HEAD``): nothing
  reported, state kept, a warning says so;
- not a git repository, or ``cwd`` missing: raised, so the runtime records an error;
- the stored commit is gone (history rewritten, then garbage-collected): re-baseline
  on the current commit, outcome ``rebaselined``;
- the branch moved to a commit that does not contain the stored one (force-push,
  rebase, reset): the net difference between the two commits is reported, with a
  warning;
- tracking ``HEAD`` and the checkout switched from one branch to another: not an
  advance, so re-baseline (``rebaselined``) instead of reporting the difference
  between two branches. A detached ``HEAD`` is tracked like a branch (a commit on it
  is an advance), and attaching or detaching reports the net change, so a
  ``git pull --rebase`` observed midway loses nothing;
- renames: one observation for the new path (``modified``, status ``R``, the old
  path in ``payload.previousPath``); a rename across the edge of ``paths`` shows as
  the side inside being created or deleted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.file_globs import resolve_base
from agentmonitors.sources.incoming_changes import git_refs
from agentmonitors.sources.incoming_changes import traits as incoming_changes_traits
from agentmonitors.sources.incoming_changes.approval import approval_of
from agentmonitors.sources.incoming_changes.plain import IncomingChangesSettings, plain_config
from agentmonitors.sources.observation import (
    ChangeKind,
    Observation,
    ObservationContext,
    ObservationResult,
)
from agentmonitors.sources.reach import repository_outside_paths
from agentmonitors.sources.traits import Approval

# How many ``git cat-file`` reads of changed files run at once.
_SNAPSHOT_READS = 8


class IncomingChangesSource(ModelSource):
    name = "incoming-changes"
    description = "Reports files under pathspecs that changed when a git branch moved."
    stateful = True
    # A git process per run: once a second at most.
    min_interval_ms = 1_000
    config_model_ref = "agentmonitors.sources.incoming_changes.config:IncomingChangesConfig"
    # What it says about itself beyond observing (sources/traits.py).
    scaffold_seeds: ClassVar[Mapping[str, str]] = incoming_changes_traits.SCAFFOLD_SEEDS
    scaffold = staticmethod(incoming_changes_traits.scaffold)
    target_problem = staticmethod(incoming_changes_traits.target_problem)

    def approval(self, config: Mapping[str, Any], workspace: str) -> Approval | None:
        # The light module's answer (``validate`` asks it without loading this module).
        return approval_of(self.observed_config(config, plain_config), workspace)

    def outside_paths(self, config: Mapping[str, Any], workspace: str) -> frozenset[str]:
        return repository_outside_paths(self.observed_config(config, plain_config).cwd, workspace)

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        parsed = self.observed_config(config, plain_config)
        repo = resolve_base(parsed.cwd, context.workspace_path)
        try:
            return await _observe(parsed, repo, context)
        except git_refs.GitError as error:
            raise RuntimeError(f"incoming-changes: {error}") from None


async def _observe(
    config: IncomingChangesSettings, repo: str, context: ObservationContext
) -> ObservationResult:
    await git_refs.ensure_repository(repo, permit=context.permit, workspace=context.workspace_path)
    previous_state = context.previous_state
    branch = config.branch
    current = await git_refs.resolve_commit(repo, branch)
    if current is None:
        return ObservationResult(
            warnings=[
                f'branch "{branch}" does not name a commit in {repo} yet; waiting for it '
                "(the stored position is kept)"
            ]
        )
    next_state: dict[str, Any] = {"ref": current}
    tracks_head = branch == "HEAD"
    head: str | None = None
    if tracks_head:
        head = await git_refs.symbolic_head(repo)
        next_state["head"] = head
    previous = _previous_ref(previous_state)
    if previous is None or previous == current:
        return ObservationResult(next_state=next_state)

    if tracks_head and isinstance(previous_state, Mapping):
        previous_head = previous_state.get("head")
        if isinstance(previous_head, str) and head is not None and previous_head != head:
            return ObservationResult(
                next_state=next_state,
                outcome="rebaselined",
                warnings=[
                    f"the checkout switched from {_short_ref(previous_head)} to "
                    f"{_short_ref(head)}: re-baselined at {current[:12]} without reporting "
                    "the difference between the branches"
                ],
            )

    if not await git_refs.commit_exists(repo, previous):
        return ObservationResult(
            next_state=next_state,
            outcome="rebaselined",
            warnings=[
                f"the last seen commit {previous[:12]} is no longer in the repository "
                f"(history rewritten and pruned): re-baselined at {current[:12]}; changes "
                "in between were not reported"
            ],
        )
    entries = await git_refs.changed_paths(repo, previous, current, config.paths)
    warnings: list[str] = []
    if not await git_refs.is_ancestor(repo, previous, current):
        if await git_refs.is_ancestor(repo, current, previous):
            how = "moved back to an earlier commit (reset)"
        else:
            how = "was rewritten (force-push, rebase or reset)"
        warnings.append(
            f'"{branch}" {how}: {current[:12]} does not contain the last seen commit '
            f"{previous[:12]}; reporting the net difference between the two"
        )
    gate = asyncio.Semaphore(_SNAPSHOT_READS)

    async def build(entry: git_refs.DiffEntry) -> Observation:
        async with gate:
            return await _observation(repo, entry, previous, current)

    async def before(entry: git_refs.DiffEntry) -> Observation | None:
        async with gate:
            return await _version_before(repo, entry, previous)

    observations = list(await asyncio.gather(*(build(entry) for entry in entries)))
    # The baseline is a commit, not the text of each file: the version a changed file
    # had at the last seen commit is handed back as its baseline, so the runtime diffs
    # its first change against it (it keeps one only where it has no equal snapshot).
    found = await asyncio.gather(*(before(entry) for entry in entries))
    baselines = [item for item in found if item is not None]
    return ObservationResult(
        observations, next_state=next_state, warnings=warnings, baselines=baselines
    )


async def _version_before(
    repo: str, entry: git_refs.DiffEntry, from_ref: str
) -> Observation | None:
    """A modified file's text at ``from_ref``, as its baseline; None for the others."""
    if change_kind(entry.status) != "modified":
        return None
    source = entry.previous_path if entry.previous_path is not None else entry.path
    text = await git_refs.blob_text(repo, from_ref, source)
    if text is None:
        return None
    path = entry.path.decode("utf-8", "replace")
    return Observation(title=f"Baseline: {path}", snapshot_text=text, object_key=path)


def change_kind(status: str) -> ChangeKind:
    """``A`` and ``C`` (a new path) are created, ``D`` deleted, the rest modified."""
    if status in ("A", "C"):
        return "created"
    if status == "D":
        return "deleted"
    return "modified"


async def _observation(
    repo: str, entry: git_refs.DiffEntry, from_ref: str, to_ref: str
) -> Observation:
    path = entry.path.decode("utf-8", "replace")
    kind = change_kind(entry.status)
    title = f"Incoming change: {path} ({kind})"
    payload: dict[str, Any] = {
        "path": path,
        "status": entry.status,
        "fromRef": from_ref,
        "toRef": to_ref,
    }
    if entry.previous_path is not None:
        payload["previousPath"] = entry.previous_path.decode("utf-8", "replace")
    text = None
    if kind != "deleted":
        text = await git_refs.blob_text(repo, to_ref, entry.path)
    return Observation(
        title=title,
        summary=title,
        payload=payload,
        snapshot_text=text,
        object_key=path,
        query_scope={"path": path},
        change_kind=kind,
    )


def _previous_ref(state: Any) -> str | None:
    """The stored commit, or None when there is no usable baseline."""
    if not isinstance(state, Mapping):
        return None
    ref = state.get("ref")
    if not isinstance(ref, str) or not git_refs.is_object_id(ref):
        return None
    return ref


def _short_ref(name: str) -> str:
    return name.removeprefix("refs/heads/")

"""incoming-changes against real git repositories: an upstream, an author, a clone."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.base import validate_scope
from agentmonitors.sources.incoming_changes import IncomingChangesSource, change_kind, git_refs
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.permit import TRUSTED
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.store.database import Database

GIT_ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    command = [
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "pull.rebase=false",
        *args,
    ]
    done = subprocess.run(
        command, check=False, cwd=cwd, env=GIT_ENV, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def write(root: Path, relative: str, text: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def commit(root: Path, message: str, **files: str | None) -> str:
    """Write (or delete, for None) files named with ``__`` for ``/``, then commit all."""
    for name, text in files.items():
        relative = name.replace("__", "/").replace("_md", ".md").replace("_py", ".py")
        if text is None:
            (root / relative).unlink()
        else:
            write(root, relative, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD")


class Repos:
    """``upstream.git`` (bare), ``author`` pushing to it, ``ws`` the watched clone."""

    def __init__(self, tmp: Path) -> None:
        self.upstream = tmp / "upstream.git"
        self.author = tmp / "author"
        self.ws = tmp / "ws"
        git(tmp, "init", "-q", "--bare", str(self.upstream))
        git(tmp, "clone", "-q", str(self.upstream), str(self.author))
        commit(self.author, "seed", docs__a_md="alpha\n", docs__b_md="beta\n", src__x_py="x\n")
        git(self.author, "push", "-q", "origin", "main")
        git(tmp, "clone", "-q", str(self.upstream), str(self.ws))
        self.state: Any = None

    def push(self, message: str, **files: str | None) -> str:
        sha = commit(self.author, message, **files)
        git(self.author, "push", "-q", "origin", "HEAD:main")
        return sha

    def pull(self) -> None:
        git(self.ws, "pull", "-q", "--no-edit")

    def observe(self, config: dict[str, Any] | None = None, *, cwd: Path | None = None) -> Any:
        """Observe the clone with the state carried over, like the runtime does."""
        result = run(config or {"paths": ["docs/**"]}, self.state, cwd or self.ws)
        if result.has_next_state:
            self.state = result.next_state
        return result


def run(config: dict[str, Any], state: Any, workspace: Path) -> ObservationResult:
    context = ObservationContext(
        previous_state=state, now_ms=0, workspace_path=str(workspace), permit=TRUSTED
    )
    return asyncio.run(IncomingChangesSource().observe(config, context))


def summary(result: ObservationResult) -> list[tuple[str, str | None, str]]:
    return [
        (item.object_key or "", item.change_kind, item.payload["status"])
        for item in result.observations
    ]


@pytest.fixture
def repos(tmp_path: Path) -> Repos:
    return Repos(tmp_path)


# --------------------------------------------------------------------------- advances


def test_first_observation_is_a_baseline(repos: Repos) -> None:
    head = git(repos.ws, "rev-parse", "HEAD")
    result = repos.observe()
    assert result.observations == [] and result.outcome is None
    assert result.next_state == {"ref": head, "head": "refs/heads/main"}
    assert repos.observe().observations == []


def test_pull_reports_each_changed_path_under_paths(repos: Repos) -> None:
    before = git(repos.ws, "rev-parse", "HEAD")
    repos.observe()
    after = repos.push("docs", docs__a_md="alpha 2\n", docs__c_md="gamma\n", src__x_py="x2\n")
    assert repos.observe().observations == []  # not pulled yet: remotes are not contacted
    repos.pull()
    result = repos.observe()
    assert summary(result) == [("docs/a.md", "modified", "M"), ("docs/c.md", "created", "A")]
    first = result.observations[0]
    assert first.to_json() == {
        "title": "Incoming change: docs/a.md (modified)",
        "summary": "Incoming change: docs/a.md (modified)",
        "payload": {"path": "docs/a.md", "status": "M", "fromRef": before, "toRef": after},
        "snapshotText": "alpha 2\n",
        "objectKey": "docs/a.md",
        "queryScope": {"path": "docs/a.md"},
        "changeKind": "modified",
    }
    assert result.observations[1].snapshot_text == "gamma\n"
    assert result.next_state == {"ref": after, "head": "refs/heads/main"}
    assert repos.observe().observations == []


def test_changes_outside_paths_advance_silently(repos: Repos) -> None:
    repos.observe()
    sha = repos.push("code only", src__x_py="x3\n", src__y_py="y\n")
    repos.pull()
    result = repos.observe()
    assert result.observations == [] and result.outcome is None
    assert result.next_state["ref"] == sha


def test_deleted_file_has_no_snapshot(repos: Repos) -> None:
    repos.observe()
    repos.push("drop", docs__b_md=None)
    repos.pull()
    (item,) = repos.observe().observations
    assert (item.object_key, item.change_kind, item.snapshot_text) == ("docs/b.md", "deleted", None)
    assert item.title == "Incoming change: docs/b.md (deleted)"
    assert item.salience is None


def test_local_commit_fires(repos: Repos) -> None:
    repos.observe()
    commit(repos.ws, "mine", docs__mine_md="mine\n")
    assert summary(repos.observe()) == [("docs/mine.md", "created", "A")]


def test_merge_reports_what_the_merge_brought(repos: Repos) -> None:
    repos.observe()
    commit(repos.ws, "local", docs__local_md="local\n")
    assert summary(repos.observe()) == [("docs/local.md", "created", "A")]
    repos.push("remote", docs__a_md="alpha remote\n")
    repos.pull()  # diverged: a merge commit
    assert len(git(repos.ws, "rev-parse", "HEAD^@").split()) == 2
    result = repos.observe()
    assert summary(result) == [("docs/a.md", "modified", "M")]
    assert result.warnings == []


def test_fetch_then_fast_forward(repos: Repos) -> None:
    repos.observe()
    repos.push("one", docs__a_md="one\n")
    repos.push("two", docs__b_md="two\n")
    git(repos.ws, "fetch", "-q")
    assert repos.observe().observations == []
    git(repos.ws, "merge", "-q", "--ff-only", "origin/main")
    # Several commits since the last look collapse into one net diff.
    assert summary(repos.observe()) == [
        ("docs/a.md", "modified", "M"),
        ("docs/b.md", "modified", "M"),
    ]


def test_a_remote_tracking_branch_moves_on_fetch(repos: Repos) -> None:
    config = {"paths": ["docs"], "branch": "origin/main"}
    baseline = repos.observe(config)
    assert set(baseline.next_state) == {"ref"}  # no HEAD bookkeeping for a named ref
    repos.push("upstream", docs__a_md="upstream\n")
    git(repos.ws, "fetch", "-q")
    assert summary(repos.observe(config)) == [("docs/a.md", "modified", "M")]


def test_rename_is_reported_on_the_new_path(repos: Repos) -> None:
    repos.observe()
    git(repos.author, "mv", "docs/a.md", "docs/renamed.md")
    repos.push("rename")
    repos.pull()
    (item,) = repos.observe().observations
    assert (item.object_key, item.change_kind) == ("docs/renamed.md", "modified")
    assert item.payload["status"] == "R"
    assert item.payload["previousPath"] == "docs/a.md"
    assert item.snapshot_text == "alpha\n"
    # Renamed out of the watched paths: the path inside is gone.
    git(repos.author, "mv", "docs/b.md", "src/b.md")
    repos.push("move out")
    repos.pull()
    assert summary(repos.observe()) == [("docs/b.md", "deleted", "D")]


def test_force_push_reports_the_net_difference_with_a_warning(repos: Repos) -> None:
    repos.observe()
    repos.push("will be dropped", docs__a_md="dropped\n")
    repos.pull()
    assert summary(repos.observe()) == [("docs/a.md", "modified", "M")]
    old = git(repos.ws, "rev-parse", "HEAD")
    git(repos.author, "reset", "-q", "--hard", "HEAD~1")
    commit(repos.author, "rewritten", docs__b_md="beta rewritten\n")
    git(repos.author, "push", "-q", "--force", "origin", "HEAD:main")
    git(repos.ws, "fetch", "-q")
    git(repos.ws, "reset", "-q", "--hard", "origin/main")
    result = repos.observe()
    # Net old..new: a.md went back to "alpha", b.md was rewritten.
    assert summary(result) == [("docs/a.md", "modified", "M"), ("docs/b.md", "modified", "M")]
    assert result.observations[0].snapshot_text == "alpha\n"
    (warning,) = result.warnings
    assert "rewritten" in warning and old[:12] in warning
    assert result.next_state["ref"] == git(repos.ws, "rev-parse", "HEAD")


def test_moving_back_is_reported_as_a_reset(repos: Repos) -> None:
    repos.observe()
    commit(repos.ws, "oops", docs__a_md="oops\n")
    repos.observe()
    git(repos.ws, "reset", "-q", "--hard", "HEAD~1")
    result = repos.observe()
    assert summary(result) == [("docs/a.md", "modified", "M")]
    assert "moved back" in result.warnings[0]


def test_pruned_previous_commit_rebaselines(repos: Repos) -> None:
    repos.observe()
    commit(repos.ws, "to be lost", docs__a_md="lost\n")
    lost = git(repos.ws, "rev-parse", "HEAD")
    repos.observe()
    git(repos.ws, "reset", "-q", "--hard", "HEAD~1")
    git(repos.ws, "reflog", "expire", "--expire=now", "--all")
    git(repos.ws, "gc", "-q", "--prune=now")
    result = repos.observe()
    assert result.observations == []
    assert result.outcome == "rebaselined"
    assert lost[:12] in result.warnings[0]
    assert result.next_state["ref"] == git(repos.ws, "rev-parse", "HEAD")


def test_unknown_stored_commit_rebaselines(repos: Repos) -> None:
    result = run({"paths": ["docs"]}, {"ref": "0123456789" * 4}, repos.ws)
    assert (result.observations, result.outcome) == ([], "rebaselined")
    # A state that is not a commit id at all is no baseline.
    again = run({"paths": ["docs"]}, {"ref": "--output=/tmp/x"}, repos.ws)
    assert (again.observations, again.outcome) == ([], None)
    assert again.next_state["ref"] == git(repos.ws, "rev-parse", "HEAD")


def test_reference_state_without_head_is_accepted(repos: Repos) -> None:
    before = git(repos.ws, "rev-parse", "HEAD")
    commit(repos.ws, "local", docs__a_md="changed\n")
    result = run({"paths": ["docs/**"]}, {"ref": before}, repos.ws)
    assert summary(result) == [("docs/a.md", "modified", "M")]


# --------------------------------------------------------------------------- HEAD, branches


def test_detached_head_is_tracked_like_a_branch(repos: Repos) -> None:
    repos.observe()
    git(repos.ws, "checkout", "-q", "--detach")
    detached = repos.observe()
    assert detached.observations == [] and detached.next_state["head"] is None
    commit(repos.ws, "on detached HEAD", docs__d_md="d\n")
    assert summary(repos.observe()) == [("docs/d.md", "created", "A")]
    # A named branch is unaffected by commits on a detached HEAD.
    main = {"paths": ["docs"], "branch": "main"}
    state = run(main, None, repos.ws).next_state
    commit(repos.ws, "more detached", docs__e_md="e\n")
    assert run(main, state, repos.ws).observations == []


def test_switching_branches_rebaselines(repos: Repos) -> None:
    repos.observe()
    git(repos.ws, "checkout", "-q", "-b", "feature")
    assert repos.observe().observations == []  # same commit, new branch
    commit(repos.ws, "feature work", docs__f_md="f\n")
    assert summary(repos.observe()) == [("docs/f.md", "created", "A")]
    git(repos.ws, "checkout", "-q", "main")
    switched = repos.observe()
    assert switched.observations == [] and switched.outcome == "rebaselined"
    assert "feature" in switched.warnings[0] and "main" in switched.warnings[0]
    assert switched.next_state["head"] == "refs/heads/main"


def test_missing_branch_waits_without_touching_the_state(repos: Repos) -> None:
    config = {"paths": ["docs"], "branch": "release"}
    result = run(config, None, repos.ws)
    assert result.observations == [] and not result.has_next_state
    assert 'branch "release"' in result.warnings[0]
    git(repos.ws, "branch", "release")
    assert run(config, None, repos.ws).next_state == {"ref": git(repos.ws, "rev-parse", "HEAD")}


def test_unborn_head_waits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "fresh")
    result = run({"paths": ["docs"]}, None, tmp_path / "fresh")
    assert result.observations == [] and not result.has_next_state and result.warnings


def test_branch_that_looks_like_an_option_is_a_ref(repos: Repos, tmp_path: Path) -> None:
    target = tmp_path / "owned"
    result = run({"paths": ["docs"], "branch": f"--output={target}"}, None, repos.ws)
    assert not result.has_next_state and result.warnings
    assert not target.exists()


# --------------------------------------------------------------------------- folders, files


def test_not_a_git_repository_raises(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RuntimeError, match="is not a git repository"):
        run({"paths": ["docs"]}, None, plain)
    with pytest.raises(RuntimeError, match="does not exist"):
        run({"paths": ["docs"], "cwd": "missing"}, None, plain)


def test_cwd_resolves_under_the_workspace(repos: Repos, tmp_path: Path) -> None:
    repos.observe({"paths": ["docs"], "cwd": "ws"}, cwd=tmp_path)
    commit(repos.ws, "local", docs__a_md="via cwd\n")
    result = repos.observe({"paths": ["docs"], "cwd": str(repos.ws)}, cwd=tmp_path / "elsewhere")
    assert summary(result) == [("docs/a.md", "modified", "M")]


def test_pathspecs_are_relative_to_a_subfolder_cwd(repos: Repos) -> None:
    config = {"paths": ["."], "cwd": "docs"}
    repos.observe(config)
    commit(repos.ws, "both", docs__a_md="sub\n", src__x_py="not here\n")
    (item,) = repos.observe(config).observations
    assert item.object_key == "docs/a.md"  # repo-relative, whatever cwd is
    assert item.snapshot_text == "sub\n"


def test_binary_and_unusual_paths(repos: Repos) -> None:
    repos.observe()
    write(repos.ws, "docs/logo.png", b"\x89PNG\0\0binary")
    write(repos.ws, "docs/café notes.md", "accents\n")
    commit(repos.ws, "files")
    result = repos.observe()
    by_path = {item.object_key: item for item in result.observations}
    assert set(by_path) == {"docs/café notes.md", "docs/logo.png"}
    assert by_path["docs/logo.png"].snapshot_text is None
    assert by_path["docs/café notes.md"].snapshot_text == "accents\n"


def test_git_environment_of_another_repository_is_ignored(
    repos: Repos, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GIT_DIR", str(repos.upstream))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    assert repos.observe().next_state["ref"] == git(repos.ws, "rev-parse", "HEAD")


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"paths": []}, "at least one git pathspec"),
        ({"paths": "docs"}, "must be an array of strings"),
        ({}, "watch.paths: is required"),
        ({"paths": ["docs", " "]}, "must not contain empty pathspecs"),
        ({"paths": ["docs"], "branch": ""}, "must not be empty"),
    ],
)
def test_invalid_config_is_rejected(tmp_path: Path, config: dict[str, Any], message: str) -> None:
    issues = validate_scope(IncomingChangesSource(), config)
    assert any(message in issue.render("watch") for issue in issues)
    with pytest.raises(ValueError, match="Invalid incoming-changes config") as caught:
        run(config, None, tmp_path)
    assert message in str(caught.value)


def test_status_letters_map_to_change_kinds() -> None:
    assert [change_kind(s) for s in "ACDMRT"] == [
        "created",
        "created",
        "deleted",
        "modified",
        "modified",
        "modified",
    ]
    assert git_refs.parse_name_status(b"M\0a\0R087\0old\0new\0C100\0x\0y\0D\0gone\0") == [
        git_refs.DiffEntry("M", b"a"),
        git_refs.DiffEntry("R", b"new", b"old"),
        git_refs.DiffEntry("C", b"y", b"x"),
        git_refs.DiffEntry("D", b"gone"),
    ]


# --------------------------------------------------------------------------- git runner


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "git"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_a_hanging_git_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_git(tmp_path, monkeypatch, "exec sleep 30")
    with pytest.raises(git_refs.GitError, match="timed out"):
        asyncio.run(git_refs.run_git(["rev-parse", "HEAD"], str(tmp_path), timeout=0.2))


def test_output_over_the_ceiling_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_git(tmp_path, monkeypatch, "head -c 300000 /dev/zero")
    with pytest.raises(git_refs.GitError, match="more than"):
        asyncio.run(git_refs.run_git(["show"], str(tmp_path), max_output=100_000))


def test_missing_git_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="git executable was not found"):
        run({"paths": ["docs"]}, None, tmp_path)


# --------------------------------------------------------------------------- real tick


@pytest.fixture
def runtime(repos: Repos, tmp_path: Path) -> Iterator[tuple[Runtime, Database, ManualClock]]:
    folder = repos.ws / ".claude" / "monitors" / "spec-updates"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: incoming-changes\n  paths: ['docs/**']\n---\nRe-read the docs.\n"
    )
    clock = ManualClock(1_780_000_000_000)
    db = Database(str(tmp_path / "data" / "inbox.db"))
    yield Runtime(db, str(repos.ws), bundled_registry(), clock=clock), db, clock
    db.close()


def test_incoming_changes_through_the_runtime_tick(
    repos: Repos, runtime: tuple[Runtime, Database, ManualClock]
) -> None:
    rt, db, clock = runtime
    baseline = asyncio.run(rt.tick())
    assert baseline.evaluated_monitors == ["spec-updates"]
    assert baseline.emitted_event_ids == [] and baseline.errored_observations == []

    repos.push("docs", docs__a_md="alpha from upstream\n", src__x_py="ignored\n")
    repos.pull()
    clock.advance(30_000)
    fired = asyncio.run(rt.tick())
    assert fired.errored_observations == []
    (event_id,) = fired.emitted_event_ids
    with db.read() as conn:
        (event,) = [dict(row) for row in conn.execute("SELECT * FROM monitor_events")]
    assert event["id"] == event_id
    assert event["title"] == "Incoming change: docs/a.md (modified)"
    assert event["object_key"] == "docs/a.md"
    assert json.loads(event["query_scope"]) == {"path": "docs/a.md", "changeKind": "modified"}

    clock.advance(30_000)
    assert asyncio.run(rt.tick()).emitted_event_ids == []


def test_a_non_git_workspace_is_an_errored_observation(tmp_path: Path) -> None:
    workspace = tmp_path / "plain"
    folder = workspace / ".claude" / "monitors" / "repo"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: incoming-changes\n  paths: [docs]\n---\nAct.\n"
    )
    db = Database(str(tmp_path / "data" / "inbox.db"))
    try:
        rt = Runtime(db, str(workspace), bundled_registry(), clock=ManualClock(1_780_000_000_000))
        result = asyncio.run(rt.tick())
    finally:
        db.close()
    (error,) = result.errored_observations
    assert error["monitorId"] == "repo"
    assert "is not a git repository" in error["message"]

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentmonitors.workspace import (
    DEFAULT_REAP_AFTER_MS,
    LocalState,
    enable_workspace,
    find_workspace_root,
    read_local_state,
    resolve_enabled_project,
    resolve_workspace,
    wake_setting,
    workspace_data_dir,
    write_local_state,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_root_is_nearest_ancestor_with_monitors(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude" / "monitors").mkdir(parents=True)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_workspace_root(str(deep)) == str(project)


def make_repository(folder: Path) -> None:
    """What ``git init`` leaves that the walk looks at: a ``.git`` folder with ``HEAD``."""
    write(folder / ".git" / "HEAD", "ref: refs/heads/main\n")


def test_enable_file_marks_root_and_beats_git(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    make_repository(outer)
    inner = outer / "inner"
    write(inner / ".claude" / "agentmonitors.local.md", "---\nenabled: true\n---\n")
    assert find_workspace_root(str(inner / "a")) == str(inner)


def test_git_root_is_fallback_and_start_is_last_resort(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repository(repo)
    (repo / "sub").mkdir()
    assert find_workspace_root(str(repo / "sub")) == str(repo)
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert find_workspace_root(str(lonely)) == str(lonely)


def test_a_worktree_counts_and_an_empty_git_folder_does_not(tmp_path: Path) -> None:
    """A linked worktree's ``.git`` is a file; an empty ``.git`` folder (a sandbox puts
    one in each writable root while a command runs) is no repository."""
    worktree = tmp_path / "worktree"
    write(worktree / ".git", "gitdir: /elsewhere/.git/worktrees/w\n")
    (worktree / "sub").mkdir()
    assert find_workspace_root(str(worktree / "sub")) == str(worktree)
    placeholder = tmp_path / "sandboxed"
    (placeholder / ".git").mkdir(parents=True)
    (placeholder / "project").mkdir()
    assert find_workspace_root(str(placeholder / "project")) == str(placeholder / "project")


def test_home_user_scope_is_not_a_project(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".claude" / "monitors").mkdir(parents=True)
    below = home / "code" / "thing"
    below.mkdir(parents=True)
    assert find_workspace_root(str(below)) == str(below)


def test_resolve_workspace_prefers_flag_then_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/srv/project")
    assert resolve_workspace("/other") == "/other"
    assert resolve_workspace() == "/srv/project"


def test_resolve_workspace_keeps_symlinked_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    (real / ".claude" / "monitors").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.chdir(link)
    monkeypatch.setenv("PWD", str(link))
    assert resolve_workspace() == str(link)


@pytest.mark.parametrize(
    ("text", "enabled"),
    [
        ("---\nenabled: true\n---\n", True),
        ("\ufeff---\nenabled: true\n---\n", True),
        ("---\r\nenabled: true\r\n---\r\n", True),
        ("---   \nenabled:   true   \n---\n", True),
        ('---\nenabled: "true"\n---\n', True),
        ("---\nenabled: 'true'\n---\n", True),
        ("---\nenabled: true # on\n---\n", True),
        ("---\nenabled: yes\n---\n", False),
        ("---\nenabled: True\n---\n", True),
        ("---\nenabled: TRUE\n---\n", True),
        ('---\nenabled: "True"\n---\n', True),
        ("---\nenabled: 'TRUE'\n---\n", True),
        ("---\nenabled: tRUE\n---\n", False),
        ("---\nenabled: on\n---\n", False),
        ("---\nenabled: FALSE\n---\n", False),
        ("---\nenabled: 1\n---\n", False),
        ("---\nenabled: false\n---\n", False),
        ("enabled: true\n", False),
        ("---\nenabled: true\n", False),
        ("", False),
    ],
)
def test_enable_file_reader_takes_yaml_core_true_and_nothing_else(
    tmp_path: Path, text: str, enabled: bool
) -> None:
    write(tmp_path / ".claude" / "agentmonitors.local.md", text)
    assert read_local_state(str(tmp_path)).enabled is enabled


def test_enable_file_keys_and_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / ".claude" / "agentmonitors.local.md",
        '---\nenabled: true\nsocket: "/run/a.sock"\ndb: /d/inbox.db\nreap-after-ms: 0\n'
        "last-boot-failure-at: 2026-01-01T00:00:00.000Z\n---\n",
    )
    state = read_local_state(str(tmp_path))
    assert state == LocalState(True, "/run/a.sock", "/d/inbox.db", 0, "2026-01-01T00:00:00.000Z")
    assert read_local_state(str(tmp_path / "missing")) == LocalState()
    assert LocalState().reap_after_ms == DEFAULT_REAP_AFTER_MS == 300000


def test_write_local_state_round_trips_owner_only(tmp_path: Path) -> None:
    state = LocalState(True, "/s.sock", "/x.db", 1234, None)
    write_local_state(str(tmp_path), state)
    path = tmp_path / ".claude" / "agentmonitors.local.md"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.splitlines()[:6] == [
        "---",
        "enabled: true",
        "socket: /s.sock",
        "db: /x.db",
        "reap-after-ms: 1234",
        "---",
    ]
    assert "Safe to delete" in text
    assert read_local_state(str(tmp_path)) == state
    assert not [name for name in os.listdir(path.parent) if name.endswith(".tmp")]


def test_enable_never_rewrites_an_enabled_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".claude" / "agentmonitors.local.md", "\ufeff---\nenabled: true\n---\nmine\n"
    )
    before = path.read_bytes()
    assert enable_workspace(str(tmp_path)) == "already-enabled"
    assert path.read_bytes() == before


def test_enable_creates_then_updates_keeping_keys(tmp_path: Path) -> None:
    assert enable_workspace(str(tmp_path)) == "created"
    assert read_local_state(str(tmp_path)).enabled
    other = tmp_path / "other"
    write(
        other / ".claude" / "agentmonitors.local.md", "---\nenabled: false\nsocket: /k.sock\n---\n"
    )
    assert enable_workspace(str(other)) == "updated"
    state = read_local_state(str(other))
    assert state.enabled and state.socket == "/k.sock"


@pytest.mark.parametrize(
    ("value", "urgencies"),
    [
        (None, {"low", "normal", "high"}),
        ("all", {"low", "normal", "high"}),
        ("ALL", {"low", "normal", "high"}),
        ("high", {"high"}),
        (" High ", {"high"}),
        ("normal", None),
        ("off", None),
        ("true", None),
    ],
)
def test_wake_names_the_urgencies_that_wake_an_idle_session(
    value: str | None, urgencies: set[str] | None
) -> None:
    found = wake_setting(value)
    assert (None if found is None else set(found)) == urgencies


def test_wake_is_read_written_and_kept_when_enabling(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".claude" / "agentmonitors.local.md",
        "---\nenabled: false\nwake: high\nlive: off\n---\n",
    )
    assert read_local_state(str(tmp_path)).wake == "high"
    assert enable_workspace(str(tmp_path)) == "updated"
    state = read_local_state(str(tmp_path))
    assert state.enabled and state.wake == "high" and state.live == "off"
    assert "wake: high" in path.read_text().split("---")[1].splitlines()
    # An unknown value is kept as written (doctor names it), never dropped.
    write_local_state(str(tmp_path), state._replace(wake="sometimes"))
    assert read_local_state(str(tmp_path)).wake == "sometimes"


def test_data_dir_is_hash_of_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    path = workspace_data_dir("/w/project")
    assert path.startswith("/data/agentmonitors/workspaces/")
    assert len(os.path.basename(path)) == 16
    assert workspace_data_dir("/w/project") == path != workspace_data_dir("/w/other")


# --------------------------------------------------------------------------- the hooks' project


def enable(root: Path, extra: str = "") -> Path:
    write(root / ".claude" / "agentmonitors.local.md", f"---\nenabled: true\n{extra}---\n")
    return root


MARK = os.path.join(".agentmonitors", "sessions", "host-1")


def test_hooks_walk_up_to_the_nearest_enabled_project(tmp_path: Path) -> None:
    project = enable(tmp_path / "p", "socket: /s.sock\n")
    deep = project / "docs" / "guide"
    deep.mkdir(parents=True)
    root, state = resolve_enabled_project(str(deep), MARK, env={})
    assert root == str(project) and state.enabled and state.socket == "/s.sock"
    assert resolve_enabled_project(str(project), MARK, env={})[0] == str(project)


def test_outside_every_project_claude_project_dir_decides(tmp_path: Path) -> None:
    project = enable(tmp_path / "p")
    outside = tmp_path / "elsewhere" / "x"
    outside.mkdir(parents=True)
    root, state = resolve_enabled_project(str(outside), MARK, env={})
    assert (root, state.enabled) == (str(outside), False)
    env = {"CLAUDE_PROJECT_DIR": str(project / "sub")}
    root, state = resolve_enabled_project(str(outside), MARK, env=env)
    assert (root, state.enabled) == (str(project), True)
    # No cwd in the payload at all: CLAUDE_PROJECT_DIR is the start.
    assert resolve_enabled_project(None, MARK, env=env)[0] == str(project)


def test_nested_projects_the_nearest_wins_unless_the_session_lives_further_up(
    tmp_path: Path,
) -> None:
    outer = enable(tmp_path / "outer")
    inner = enable(outer / "vendor" / "inner")
    deep = inner / "src"
    deep.mkdir()
    assert resolve_enabled_project(str(deep), MARK, env={})[0] == str(inner)
    assert resolve_enabled_project(str(deep), None, env={})[0] == str(inner)
    (outer / MARK).mkdir(parents=True)  # host-1 registered at the outer root
    assert resolve_enabled_project(str(deep), MARK, env={})[0] == str(outer)
    other = os.path.join(".agentmonitors", "sessions", "host-2")
    assert resolve_enabled_project(str(deep), other, env={})[0] == str(inner)
    # Registered at the inner root too (its own start there): the nearest such wins.
    (inner / MARK).mkdir(parents=True)
    assert resolve_enabled_project(str(deep), MARK, env={})[0] == str(inner)


def test_a_session_keeps_its_project_from_claude_project_dir(tmp_path: Path) -> None:
    home_project = enable(tmp_path / "a")
    (home_project / MARK).mkdir(parents=True)
    visited = enable(tmp_path / "b")
    env = {"CLAUDE_PROJECT_DIR": str(home_project)}
    assert resolve_enabled_project(str(visited), MARK, env=env)[0] == str(home_project)
    assert resolve_enabled_project(str(visited), "never", env=env)[0] == str(visited)


def test_a_disabled_enable_file_is_walked_past(tmp_path: Path) -> None:
    project = enable(tmp_path / "p")
    write(project / "sub" / ".claude" / "agentmonitors.local.md", "---\nenabled: false\n---\n")
    assert resolve_enabled_project(str(project / "sub" / "x"), MARK, env={})[0] == str(project)


def test_paths_stay_lexical_through_a_symlink(tmp_path: Path) -> None:
    real = enable(tmp_path / "real")
    (real / "docs").mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert resolve_enabled_project(str(link / "docs"), MARK, env={})[0] == str(link)

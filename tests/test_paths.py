"""Database, socket and log path resolution (docs/architecture.md, "Where trusted state lives")."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmonitors import paths
from agentmonitors.paths import (
    SocketPathError,
    ensure_private_dir,
    fit_socket_path,
    global_db_path,
    resolve_db_path,
    resolve_socket_path,
    workspace_log_path,
)
from agentmonitors.workspace import (
    LocalState,
    enable_file_path,
    workspace_data_dir,
    write_local_state,
)


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


@pytest.fixture
def workspace(tmp_path: Path) -> str:
    path = tmp_path / "project"
    path.mkdir()
    return str(path)


@pytest.fixture
def fallback_base(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # Never touch the real /tmp/agentmonitors-<uid>: other processes may use it.
    base = tempfile.mkdtemp(dir="/tmp", prefix="amp-")
    monkeypatch.setattr(paths, "SOCKET_FALLBACK_BASE", base)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def short_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # Socket paths derived under pytest's long tmp_path would exceed 100 characters
    # and be substituted; a short HOME/XDG keeps the derived paths themselves.
    base = tempfile.mkdtemp(dir="/tmp", prefix="amh-")
    monkeypatch.setenv("HOME", base)
    monkeypatch.setenv("XDG_DATA_HOME", os.path.join(base, "xdg"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def enable(workspace: str, **keys: str) -> None:
    write_local_state(workspace, LocalState(enabled=True, **keys))  # type: ignore[arg-type]


def long_path(length: int = 150) -> str:
    stem = "/var/" + "d" * (length - len("/var/") - len("/agentmonitors.sock"))
    path = stem + "/agentmonitors.sock"
    assert len(path) == length
    return path


def substitute_for(base: str, path: str) -> str:
    digest = hashlib.sha256(path.encode()).hexdigest()[:16]
    return os.path.join(base, f"agentmonitors-{os.getuid()}", f"agentmonitors-{digest}.sock")


# --------------------------------------------------------------------------- database


def test_global_db_uses_home_not_xdg(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "/somewhere/else")
    expected = str(home / ".local" / "share" / "agentmonitors" / "inbox.db")
    assert global_db_path() == expected
    assert resolve_db_path(None) == expected


def test_db_env_beats_everything(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    enable(workspace, db="/persisted/inbox.db")
    monkeypatch.setenv("AGENTMONITORS_DB", "/env/inbox.db")
    assert resolve_db_path(workspace) == "/env/inbox.db"
    assert global_db_path() == "/env/inbox.db"


def test_db_env_memory_passes_through(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTMONITORS_DB", ":memory:")
    assert resolve_db_path(workspace) == ":memory:"
    assert resolve_db_path(None) == ":memory:"


def test_empty_db_env_is_ignored(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTMONITORS_DB", "")
    assert global_db_path() == str(home / ".local" / "share" / "agentmonitors" / "inbox.db")


def test_enabled_workspace_uses_a_persisted_db_of_ours(workspace: str) -> None:
    ours = os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors", "elsewhere", "inbox.db")
    enable(workspace, db=ours)
    assert resolve_db_path(workspace) == ours


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("/persisted/inbox.db", "not in agentmonitors' own data folders"),
        (":memory:", "not an absolute, normalized path"),
        ("relative/inbox.db", "not an absolute, normalized path"),
    ],
)
def test_a_persisted_db_elsewhere_is_ignored_with_a_notice(
    workspace: str, value: str, why: str
) -> None:
    enable(workspace, db=value)
    notices: list[str] = []
    derived = os.path.join(workspace_data_dir(workspace), "inbox.db")
    assert resolve_db_path(workspace, notice=notices.append) == derived
    assert notices == [
        f"AgentMon: ignoring `db: {value}` in {enable_file_path(workspace)} ({why});"
        f" using {derived}."
    ]


def test_a_persisted_db_escaping_our_folder_is_ignored(workspace: str) -> None:
    root = os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors")
    enable(workspace, db=root + "/../../../project/inbox.db")
    derived = os.path.join(workspace_data_dir(workspace), "inbox.db")
    assert resolve_db_path(workspace, notice=lambda _: None) == derived


def test_a_persisted_db_in_a_loose_or_foreign_folder_is_ignored(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors", "loose")
    os.makedirs(folder)
    os.chmod(folder, 0o777)
    enable(workspace, db=os.path.join(folder, "inbox.db"))
    notices: list[str] = []
    derived = os.path.join(workspace_data_dir(workspace), "inbox.db")
    assert resolve_db_path(workspace, notice=notices.append) == derived
    assert "is writable by other users (mode 777)" in notices[0]
    os.chmod(folder, 0o700)
    real_uid = os.getuid()
    monkeypatch.setattr(paths.os, "getuid", lambda: real_uid + 1)
    notices.clear()
    assert resolve_db_path(workspace, notice=notices.append) == derived
    assert f"is owned by uid {real_uid}, not by you" in notices[0]


def test_the_default_notice_goes_to_stderr_once(
    workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    enable(workspace, db="/persisted/once.db", socket="/persisted/once.sock")
    resolve_db_path(workspace)
    resolve_db_path(workspace)
    resolve_socket_path(workspace)
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("AgentMon: ignoring `db: /persisted/once.db` in ")
    assert lines[1].startswith("AgentMon: ignoring `socket: /persisted/once.sock` in ")


def test_enabled_workspace_without_db_key_uses_derived(workspace: str) -> None:
    enable(workspace)
    derived = os.path.join(workspace_data_dir(workspace), "inbox.db")
    assert resolve_db_path(workspace) == derived
    assert derived.startswith(os.environ["XDG_DATA_HOME"])


def test_disabled_workspace_uses_global(workspace: str, home: Path) -> None:
    write_local_state(workspace, LocalState(enabled=False, db="/persisted/inbox.db"))
    assert resolve_db_path(workspace) == str(
        home / ".local" / "share" / "agentmonitors" / "inbox.db"
    )
    assert resolve_db_path(os.path.join(workspace, "never-enabled")) == global_db_path()


# --------------------------------------------------------------------------- socket


def test_explicit_socket_wins(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    enable(workspace, socket="/persisted.sock")
    monkeypatch.setenv("AGENTMONITORS_SOCKET", "/env.sock")
    assert resolve_socket_path(workspace, "/typed.sock") == "/typed.sock"


def test_socket_env_beats_local_state(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    enable(workspace, socket="/persisted.sock")
    monkeypatch.setenv("AGENTMONITORS_SOCKET", "/env.sock")
    assert resolve_socket_path(workspace) == "/env.sock"
    assert resolve_socket_path(None) == "/env.sock"


def test_enabled_workspace_socket_persisted_then_derived(workspace: str, short_home: str) -> None:
    ours = os.path.join(short_home, "xdg", "agentmonitors", "other.sock")
    enable(workspace, socket=ours)
    assert resolve_socket_path(workspace) == ours
    derived = os.path.join(workspace_data_dir(workspace), "agentmonitors.sock")
    enable(workspace, socket="/persisted.sock")
    assert resolve_socket_path(workspace, notice=lambda _: None) == derived
    enable(workspace)
    assert derived.startswith(os.path.join(short_home, "xdg", "agentmonitors", "workspaces"))
    assert resolve_socket_path(workspace) == derived


def test_not_enabled_falls_back_beside_the_global_db(
    workspace: str, short_home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_local_state(workspace, LocalState(enabled=False, socket="/persisted.sock"))
    expected = os.path.join(short_home, ".local", "share", "agentmonitors", "agentmonitors.sock")
    assert resolve_socket_path(workspace) == expected
    monkeypatch.setenv("AGENTMONITORS_DB", "/srv/am/inbox.db")
    assert resolve_socket_path(None) == "/srv/am/agentmonitors.sock"


def test_memory_db_puts_the_global_socket_under_the_data_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTMONITORS_DB", ":memory:")
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert resolve_socket_path(None) == "/xdg/agentmonitors/agentmonitors.sock"


def test_long_local_socket_is_substituted_silently(
    workspace: str, fallback_base: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors", "d" * 100)
    requested = os.path.join(folder, "agentmonitors.sock")
    enable(workspace, socket=requested)
    warnings: list[str] = []
    assert resolve_socket_path(workspace, warn=warnings.append) == substitute_for(
        fallback_base, requested
    )
    assert warnings == []
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- fitting


def test_short_paths_are_untouched(fallback_base: str) -> None:
    exactly = "/" + "s" * 94 + ".sock"
    assert len(exactly) == 100
    assert fit_socket_path(exactly) == exactly
    assert fit_socket_path("rel.sock") == "rel.sock"
    assert os.listdir(fallback_base) == []  # no directory made for paths that fit


def test_long_path_gets_a_private_stable_substitute(fallback_base: str) -> None:
    requested = long_path(101)
    first = fit_socket_path(requested)
    assert first == substitute_for(fallback_base, requested)
    assert fit_socket_path(requested) == first
    assert fit_socket_path(long_path(102)) != first
    assert len(first) <= 100
    directory = os.path.dirname(first)
    info = os.lstat(directory)
    assert stat.S_ISDIR(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o700
    assert info.st_uid == os.getuid()


def test_explicit_long_socket_warns_once_with_the_substitute(fallback_base: str) -> None:
    requested = long_path(150)
    warnings: list[str] = []
    result = resolve_socket_path(None, requested, warn=warnings.append)
    assert result == substitute_for(fallback_base, requested)
    assert warnings == [
        f'Warning: --socket path "{requested}" is 150 characters, over the 100-character '
        f"limit for Unix sockets; using {result} instead."
    ]


def test_explicit_warning_defaults_to_stderr(
    fallback_base: str, capsys: pytest.CaptureFixture[str]
) -> None:
    requested = long_path(120)
    result = fit_socket_path(requested, explicit=True)
    err = capsys.readouterr().err
    assert err.startswith(f'Warning: --socket path "{requested}" is 120 characters')
    assert err.endswith(f"using {result} instead.\n")
    assert err.count("\n") == 1


def test_env_long_socket_is_not_warned_about(
    fallback_base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    requested = long_path()
    monkeypatch.setenv("AGENTMONITORS_SOCKET", requested)
    warnings: list[str] = []
    assert resolve_socket_path(None, warn=warnings.append) == substitute_for(
        fallback_base, requested
    )
    assert warnings == []


def test_non_ascii_length_is_counted_in_bytes(fallback_base: str) -> None:
    requested = "/" + "é" * 60 + ".sock"  # 66 characters, 126 bytes
    warnings: list[str] = []
    result = fit_socket_path(requested, explicit=True, warn=warnings.append)
    assert result == substitute_for(fallback_base, requested)
    assert "is 126 bytes" in warnings[0]


def test_loose_fallback_dir_is_tightened(fallback_base: str) -> None:
    directory = os.path.join(fallback_base, f"agentmonitors-{os.getuid()}")
    os.mkdir(directory)
    os.chmod(directory, 0o777)
    fit_socket_path(long_path())
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700


def test_symlinked_fallback_dir_is_refused(fallback_base: str, tmp_path: Path) -> None:
    target = tmp_path / "attacker"
    target.mkdir(mode=0o700)
    os.symlink(target, os.path.join(fallback_base, f"agentmonitors-{os.getuid()}"))
    with pytest.raises(SocketPathError, match="symlink"):
        fit_socket_path(long_path())


def test_fallback_path_that_is_a_file_is_refused(fallback_base: str) -> None:
    Path(fallback_base, f"agentmonitors-{os.getuid()}").write_text("x", encoding="utf-8")
    with pytest.raises(SocketPathError):
        fit_socket_path(long_path())


def test_foreign_owned_fallback_dir_is_refused(
    fallback_base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = os.path.join(fallback_base, "foreign")
    os.mkdir(directory, 0o700)
    if os.getuid() == 0:
        os.chown(directory, 54321, -1)
    else:
        real_uid = os.getuid()
        monkeypatch.setattr(paths.os, "getuid", lambda: real_uid + 1)
    with pytest.raises(SocketPathError, match="owned by uid"):
        ensure_private_dir(directory)
    assert isinstance(SocketPathError("x"), OSError)


def test_a_listener_at_the_old_shared_name_is_never_used(fallback_base: str) -> None:
    # Older builds substituted /tmp/agentmonitors-<hash>.sock, a name any local user
    # can take; only the private per-uid folder is used now, listener or not.
    requested = long_path()
    digest = hashlib.sha256(requested.encode()).hexdigest()[:16]
    legacy = os.path.join(fallback_base, f"agentmonitors-{digest}.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(legacy)
        listener.listen()
        listener.settimeout(0.2)
        assert fit_socket_path(requested) == substitute_for(fallback_base, requested)
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected to it


# --------------------------------------------------------------------------- log


def test_workspace_log_path(workspace: str) -> None:
    assert workspace_log_path(workspace) == os.path.join(
        workspace_data_dir(workspace), "daemon.log"
    )

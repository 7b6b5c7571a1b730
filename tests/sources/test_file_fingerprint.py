"""file-fingerprint observe, on real files."""

from __future__ import annotations

import asyncio
import builtins
import errno
import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.permit import TRUSTED

HOUR_AGO_NS = time.time_ns() - 3600 * 1_000_000_000


def sha(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def write(path: Path, data: bytes | str, *, old: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    if old:
        os.utime(path, ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    return path


class Monitor:
    """One monitor's config, observed repeatedly with its stored state carried over."""

    def __init__(
        self,
        config: Mapping[str, Any],
        workspace: Path | None,
        source: FileFingerprintSource | None = None,
        monitor_id: str = "files",
    ) -> None:
        self.config = dict(config)
        self.monitor_id = monitor_id
        self.workspace = workspace
        self.source = source or FileFingerprintSource()
        self.state: Any = None

    def observe(self) -> ObservationResult:
        context = ObservationContext(
            previous_state=self.state,
            now_ms=1_700_000_000_000,
            workspace_path=str(self.workspace) if self.workspace is not None else None,
            monitor_id=self.monitor_id,
            permit=TRUSTED,
        )
        result = asyncio.run(self.source.observe(self.config, context))
        if result.has_next_state:
            self.state = result.next_state
        return result

    def tracked(self) -> list[str]:
        return list(self.state["fingerprints"])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def test_baseline_stores_hashes_and_emits_nothing(ws: Path) -> None:
    a = write(ws / "a.txt", "alpha")
    b = write(ws / "sub" / "b.txt", "beta")
    monitor = Monitor({"globs": "**/*.txt"}, ws)
    result = monitor.observe()
    assert result.observations == []
    assert result.outcome is None
    assert result.next_state["fingerprints"] == {str(a): sha("alpha"), str(b): sha("beta")}
    assert monitor.observe().observations == []


def test_created_modified_deleted_observations(ws: Path) -> None:
    a = write(ws / "a.txt", "one")
    doomed = write(ws / "doomed.txt", "bye")
    monitor = Monitor({"globs": ["*.txt"]}, ws)
    monitor.observe()

    write(a, "two")
    new = write(ws / "new.txt", "fresh\n")
    doomed.unlink()
    result = monitor.observe()
    assert [o.to_json() for o in result.observations] == [
        {
            "title": f"File changed: {a}",
            "summary": f"File changed: {a}",
            "payload": {"filePath": str(a), "previousHash": sha("one"), "currentHash": sha("two")},
            "snapshotText": "two",
            "snapshot": {
                "filePath": str(a),
                "previousHash": sha("one"),
                "currentHash": sha("two"),
            },
            "objectKey": str(a),
            "queryScope": {"filePath": str(a)},
            "changeKind": "modified",
        },
        {
            "title": f"File deleted: {doomed}",
            "summary": f"File deleted: {doomed}",
            "payload": {"filePath": str(doomed), "previousHash": sha("bye")},
            "snapshot": {"filePath": str(doomed), "previousHash": sha("bye")},
            "objectKey": str(doomed),
            "queryScope": {"filePath": str(doomed)},
            "changeKind": "deleted",
            "salience": "high",
        },
        {
            "title": f"File created: {new}",
            "summary": f"File created: {new}",
            "payload": {"filePath": str(new), "currentHash": sha("fresh\n")},
            "snapshotText": "fresh\n",
            "snapshot": {"filePath": str(new), "currentHash": sha("fresh\n")},
            "objectKey": str(new),
            "queryScope": {"filePath": str(new)},
            "changeKind": "created",
        },
    ]
    assert result.next_state["fingerprints"] == {str(a): sha("two"), str(new): sha("fresh\n")}
    assert monitor.observe().observations == []


def test_descoped_when_file_still_exists_but_is_no_longer_matched(ws: Path) -> None:
    keep = write(ws / "keep.md", "k")
    gone = write(ws / "draft.md", "d")
    monitor = Monitor({"globs": "*.md"}, ws)
    monitor.observe()
    monitor.config["ignore"] = "draft.md"
    (observation,) = monitor.observe().observations
    assert observation.change_kind == "descoped"
    assert observation.title == f"File no longer matched by globs: {gone}"
    assert observation.summary == observation.title
    assert observation.payload == {"filePath": str(gone), "previousHash": sha("d")}
    assert observation.snapshot == observation.payload
    assert observation.salience is None
    assert observation.snapshot_text is None
    assert monitor.tracked() == [str(keep)]


def test_deleted_when_a_parent_folder_became_a_file(ws: Path) -> None:
    tracked = write(ws / "a" / "b.txt", "x")
    monitor = Monitor({"globs": "a/*.txt"}, ws)
    monitor.observe()
    tracked.unlink()
    (ws / "a").rmdir()
    write(ws / "a", "now a file")  # stat(a/b.txt) fails with ENOTDIR
    (observation,) = monitor.observe().observations
    assert observation.change_kind == "deleted"
    assert observation.salience == "high"


def test_binary_content_has_no_snapshot_text_and_bad_utf8_is_replaced(ws: Path) -> None:
    monitor = Monitor({"globs": "*.bin"}, ws)
    monitor.observe()
    write(ws / "nul.bin", b"abc\x00def")
    write(ws / "latin.bin", b"caf\xe9")
    latin, nul = monitor.observe().observations
    assert nul.change_kind == "created"
    assert nul.snapshot_text is None
    assert nul.payload["currentHash"] == sha(b"abc\x00def")
    assert latin.snapshot_text == "caf\ufffd"


def test_ignore_removes_files_from_baseline_and_detection(ws: Path) -> None:
    write(ws / "src" / "main.py", "m")
    write(ws / "src" / "gen" / "out.py", "g")
    monitor = Monitor({"globs": "src/**/*.py", "ignore": ["src/gen/**"]}, ws)
    monitor.observe()
    assert monitor.tracked() == [str(ws / "src" / "main.py")]
    write(ws / "src" / "gen" / "more.py", "g2")
    assert monitor.observe().observations == []


def test_braces_expand_alternatives_across_folders(ws: Path) -> None:
    for name in ("docs/a.md", "docs/b.txt", "docs/c.rst", "notes/n.md", "other/o.md"):
        write(ws / name, name)
    monitor = Monitor({"globs": ["{docs,notes}/*.md", "docs/*.{txt,rst}"]}, ws)
    monitor.observe()
    assert monitor.tracked() == [
        str(ws / "docs/a.md"),
        str(ws / "docs/b.txt"),
        str(ws / "docs/c.rst"),
        str(ws / "notes/n.md"),
    ]


def test_globstar_question_mark_and_classes(ws: Path) -> None:
    for name in ("top.txt", "a/one.txt", "a/b/c/deep.txt", "a/b/skip.md", "x1.log", "x22.log"):
        write(ws / name, name)
    (ws / "emptydir").mkdir()
    monitor = Monitor({"globs": ["**/*.txt", "x?.log", "[a-z]/b/*.md"]}, ws)
    monitor.observe()
    assert monitor.tracked() == [
        str(ws / "a/b/c/deep.txt"),
        str(ws / "a/b/skip.md"),
        str(ws / "a/one.txt"),
        str(ws / "top.txt"),
        str(ws / "x1.log"),
    ]
    everything = Monitor({"globs": "a/**"}, ws)
    everything.observe()  # folders matched by ** are never fingerprinted
    assert everything.tracked() == [
        str(ws / "a/b/c/deep.txt"),
        str(ws / "a/b/skip.md"),
        str(ws / "a/one.txt"),
    ]


def test_dotfiles_match_only_when_named(ws: Path) -> None:
    for name in (".env", "visible.cfg", ".hidden/inner.cfg", "sub/.rc.cfg", "sub/ok.cfg"):
        write(ws / name, name)
    wildcard = Monitor({"globs": ["*", "**/*.cfg"]}, ws)
    wildcard.observe()
    assert wildcard.tracked() == [str(ws / "sub/ok.cfg"), str(ws / "visible.cfg")]
    named = Monitor({"globs": [".env", ".hidden/*.cfg", "**/.*.cfg"]}, ws)
    named.observe()
    assert named.tracked() == [
        str(ws / ".env"),
        str(ws / ".hidden/inner.cfg"),
        str(ws / "sub/.rc.cfg"),
    ]


def test_duplicates_are_fingerprinted_once(ws: Path) -> None:
    target = write(ws / "a.md", "a")
    monitor = Monitor({"globs": ["*.md", "a.md", "**/a.md", "./a.md"]}, ws)
    assert monitor.observe().next_state["fingerprints"] == {str(target): sha("a")}


def test_absolute_pattern_ignores_cwd(ws: Path, tmp_path: Path) -> None:
    elsewhere = write(tmp_path / "elsewhere" / "e.log", "e")
    write(ws / "w.log", "w")
    monitor = Monitor({"globs": [f"{tmp_path}/elsewhere/*.log", "*.log"], "cwd": "sub"}, ws)
    (ws / "sub").mkdir()
    monitor.observe()
    assert monitor.tracked() == [str(elsewhere)]


def test_relative_cwd_resolves_under_workspace_and_absolute_cwd_as_is(
    ws: Path, tmp_path: Path
) -> None:
    inner = write(ws / "pkg" / "lib" / "x.py", "x")
    write(ws / "top.py", "t")
    relative = Monitor({"globs": "lib/*.py", "cwd": "pkg"}, ws)
    relative.observe()
    assert relative.tracked() == [str(inner)]
    outside = write(tmp_path / "abs" / "y.py", "y")
    absolute = Monitor({"globs": "*.py", "cwd": str(tmp_path / "abs")}, ws)
    absolute.observe()
    assert absolute.tracked() == [str(outside)]


def test_without_workspace_globs_resolve_against_process_cwd(tmp_path: Path) -> None:
    # conftest makes tmp_path/work the process cwd.
    here = write(Path.cwd() / "here.txt", "h")
    monitor = Monitor({"globs": "*.txt"}, None)
    monitor.observe()
    assert monitor.tracked() == [str(here)]
    assert Path.cwd() == tmp_path / "work"


def test_symlinks_to_folders_are_dropped_and_links_to_files_followed(ws: Path) -> None:
    real = write(ws / "real" / "r.txt", "r")
    (ws / "dirlink.txt").symlink_to(ws / "real", target_is_directory=True)
    (ws / "filelink.txt").symlink_to(real)
    (ws / "dangling.txt").symlink_to(ws / "missing.txt")
    monitor = Monitor({"globs": ["*.txt", "real/*.txt"]}, ws)
    monitor.observe()
    assert monitor.state["fingerprints"] == {
        str(ws / "filelink.txt"): sha("r"),
        str(real): sha("r"),
    }


def test_globstar_does_not_crawl_symlinked_folders(ws: Path) -> None:
    # The linked folder is inside the workspace: one outside is never followed
    # (tests/sources/test_symlinks.py).
    write(ws / "elsewhere" / "direct.txt", "d")
    write(ws / "elsewhere" / "nested" / "deep.txt", "n")
    write(ws / "src" / "own.txt", "o")
    (ws / "src" / "link").symlink_to(ws / "elsewhere", target_is_directory=True)
    monitor = Monitor({"globs": "src/**/*.txt"}, ws)
    monitor.observe()
    # The glob dialect's rule: a symlinked folder's contents match the segments after **, but the
    # link is not crawled further.
    assert monitor.tracked() == [str(ws / "src/link/direct.txt"), str(ws / "src/own.txt")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_are_never_opened(ws: Path) -> None:
    os.mkfifo(ws / "pipe.txt")
    write(ws / "a.txt", "a")
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.observe()
    assert monitor.tracked() == [str(ws / "a.txt")]


def test_no_files_matched_on_baseline_and_later(ws: Path) -> None:
    monitor = Monitor({"globs": "*.md"}, ws)
    first = monitor.observe()
    assert first.outcome == "no-files-matched"
    assert first.next_state == {"fingerprints": {}, "stats": {}}
    assert monitor.observe().outcome == "no-files-matched"
    only = write(ws / "only.md", "o")
    created = monitor.observe()
    assert created.outcome is None
    assert [o.change_kind for o in created.observations] == ["created"]
    only.unlink()
    deleted = monitor.observe()
    assert [o.change_kind for o in deleted.observations] == ["deleted"]
    assert deleted.outcome is None  # something was emitted
    assert monitor.observe().outcome == "no-files-matched"


def test_pattern_naming_only_folders_matches_nothing(ws: Path) -> None:
    write(ws / "docs" / "a.md", "a")
    assert Monitor({"globs": "docs/"}, ws).observe().outcome == "no-files-matched"


def test_symlink_loop_raises_naming_the_path(ws: Path) -> None:
    loop = ws / "loop.txt"
    loop.symlink_to(loop)
    monitor = Monitor({"globs": "*.txt"}, ws)
    with pytest.raises(OSError, match=r"loop\.txt"):
        monitor.observe()


def deny(monkeypatch: pytest.MonkeyPatch, denied: Path, *, folder: bool) -> None:
    """Refuse what the kernel refuses for a mode-000 file (opening it) or folder (listing
    it, reaching anything inside): simulated, since root, as in CI, passes any mode."""
    prefix = str(denied)

    def refused(target: Any) -> bool:
        if not isinstance(target, str | bytes | os.PathLike):
            return False  # a file descriptor
        path = os.fsdecode(os.fspath(target))
        return path == prefix or (folder and path.startswith(prefix + os.sep))

    def guard(real: Any) -> Any:
        def call(target: Any, *args: Any, **kwargs: Any) -> Any:
            if refused(target):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
            return real(target, *args, **kwargs)

        return call

    monkeypatch.setattr(builtins, "open", guard(builtins.open))
    monkeypatch.setattr(os, "open", guard(os.open))
    if folder:
        monkeypatch.setattr(os, "stat", guard(os.stat))
        monkeypatch.setattr(os, "scandir", guard(os.scandir))


def test_unreadable_matched_file_raises_and_is_never_guessed_deleted(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = write(ws / "secret.txt", "s")
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.observe()
    os.utime(secret)  # a fresh mtime forces a read
    with monkeypatch.context() as patched:
        deny(patched, secret, folder=False)
        with pytest.raises(OSError, match=r"Cannot read matched file .*secret\.txt: Permission"):
            monitor.observe()
    # Readable again: the file is still tracked, never reported deleted.
    assert monitor.observe().observations == []
    assert list(monitor.state["fingerprints"]) == [str(secret)]


def test_tracked_path_that_cannot_be_stat_raises(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = ws / "locked"
    write(locked / "f.txt", "f")
    monitor = Monitor({"globs": "locked/*.txt"}, ws)
    monitor.observe()
    with monkeypatch.context() as patched:
        deny(patched, locked, folder=True)
        with pytest.raises(OSError, match=r"Cannot stat .*f\.txt: Permission"):
            monitor.observe()
    assert monitor.observe().observations == []
    assert list(monitor.state["fingerprints"]) == [str(locked / "f.txt")]


def test_output_is_sorted_by_path(ws: Path) -> None:
    monitor = Monitor({"globs": ["z/**/*.txt", "a/*.txt", "m.txt"]}, ws)
    monitor.observe()
    names = ["z/q/1.txt", "a/b.txt", "m.txt", "a/a.txt", "z/0.txt"]
    for name in names:
        write(ws / name, name)
    result = monitor.observe()
    expected = sorted(str(ws / name) for name in names)
    assert [o.object_key for o in result.observations] == expected
    assert list(result.next_state["fingerprints"]) == expected


def test_invalid_config_raises_value_error(ws: Path) -> None:
    with pytest.raises(ValueError, match="globs"):
        Monitor({"globs": ["ok", " "]}, ws).observe()
    with pytest.raises(ValueError, match="globs"):
        Monitor({"cwd": "x"}, ws).observe()


def test_unusable_previous_state_means_baseline(ws: Path) -> None:
    write(ws / "a.txt", "a")
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.state = {"something": "else"}
    assert monitor.observe().observations == []
    assert monitor.tracked() == [str(ws / "a.txt")]


def later() -> int:
    """A wall clock past the racy window of files written just now."""
    return time.time_ns() + 10 * 1_000_000_000


def bytes_read() -> int:
    """Bytes this process (every thread) has read through read(2) and friends."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/self/io")
def test_settled_unchanged_file_is_not_reread_from_the_stored_state(ws: Path) -> None:
    """A new source instance (as in a fresh ``daemon once`` process) skips a settled file
    whose size, mtime, ctime and inode match the stored state: it reads none of it."""
    big = write(ws / "big.txt", "x" * (4 * 1024 * 1024))
    monitor = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    monitor.observe()
    info = os.stat(big)
    stored = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
    assert monitor.state["stats"] == {str(big): stored}

    fresh = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    fresh.state = monitor.state
    before = bytes_read()
    result = fresh.observe()
    assert bytes_read() - before < 1024 * 1024, "the unchanged file was read again"
    assert result.observations == []
    assert fresh.state == monitor.state

    # Control: the same run with a stale stat key does read the file.
    fresh.state = {**monitor.state, "stats": {str(big): [0, 0, 0, 0]}}
    before = bytes_read()
    assert fresh.observe().observations == []
    assert bytes_read() - before >= 4 * 1024 * 1024
    assert fresh.state["stats"] == {str(big): stored}


def test_rewrite_with_the_old_mtime_restored_is_detected(ws: Path) -> None:
    """Same size, same inode, old mtime put back (touch -r, rsync -t): the ctime moved,
    so the stored hash is not trusted."""
    path = write(ws / "a.txt", "aaaa", old=True)
    monitor = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    monitor.observe()
    assert str(path) in monitor.state["stats"]
    before = os.stat(path)
    time.sleep(0.01)  # the filesystem's ctime must tick past the first write
    path.write_text("bbbb")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    (observation,) = monitor.observe().observations
    assert observation.change_kind == "modified"
    assert observation.payload["currentHash"] == sha("bbbb")
    assert observation.snapshot_text == "bbbb"


def test_state_without_stats_reads_every_file_once(ws: Path) -> None:
    """A state stored before stat keys existed still loads: its hashes are checked by
    reading, and the next state carries the keys."""
    same = write(ws / "same.txt", "same", old=True)
    edited = write(ws / "edited.txt", "new!", old=True)
    monitor = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    monitor.state = {"fingerprints": {str(same): sha("same"), str(edited): sha("old!")}}
    (observation,) = monitor.observe().observations
    assert (observation.object_key, observation.change_kind) == (str(edited), "modified")
    assert set(monitor.state["stats"]) == {str(same), str(edited)}


def test_recently_modified_file_is_always_rehashed(ws: Path) -> None:
    path = write(ws / "a.txt", "aaaa")  # mtime is now: racily clean
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.observe()
    before = os.stat(path)
    path.write_text("bbbb")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    (observation,) = monitor.observe().observations
    assert observation.change_kind == "modified"
    assert observation.payload["currentHash"] == sha("bbbb")


def test_file_hashed_while_racy_is_reread_after_it_settles(ws: Path) -> None:
    """A hash taken within 2 s of the last write is never reused, even once it is old."""
    path = write(ws / "a.txt", "aaaa")
    monitor = Monitor({"globs": "*.txt"}, ws)  # the real clock: the write is racy
    monitor.observe()
    assert monitor.state["stats"] == {}
    before = os.stat(path)
    path.write_text("bbbb")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    monitor.source = FileFingerprintSource(later)  # the racy window has passed
    (observation,) = monitor.observe().observations
    assert observation.payload["currentHash"] == sha("bbbb")
    assert str(path) in monitor.state["stats"]


def test_cache_disagreeing_with_stored_state_rereads(ws: Path) -> None:
    path = write(ws / "a.txt", "aaaa", old=True)
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.observe()
    monitor.observe()
    monitor.state = {"fingerprints": {str(path): "stale"}}
    (observation,) = monitor.observe().observations
    assert observation.change_kind == "modified"
    assert observation.payload == {
        "filePath": str(path),
        "previousHash": "stale",
        "currentHash": sha("aaaa"),
    }
    assert observation.snapshot_text == "aaaa"


def test_stored_hash_disagreeing_with_its_stat_key_is_not_trusted(ws: Path) -> None:
    """A stat key stored for a path the fingerprints lack is ignored: the file is read."""
    path = write(ws / "a.txt", "aaaa", old=True)
    monitor = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    monitor.observe()
    monitor.state = {"fingerprints": {}, "stats": monitor.state["stats"]}
    (observation,) = monitor.observe().observations
    assert (observation.object_key, observation.change_kind) == (str(path), "created")
    assert observation.payload["currentHash"] == sha("aaaa")


def test_an_unchanged_state_is_kept_not_handed_back(ws: Path) -> None:
    """Nothing changed: the stored state stands (the runtime then does not rewrite it);
    a moved stat key alone (same bytes, new mtime) is a new state to store."""
    path = write(ws / "a.txt", "aaaa", old=True)
    monitor = Monitor({"globs": "*.txt"}, ws, FileFingerprintSource(later))
    baseline = monitor.observe()
    assert baseline.has_next_state
    stored = monitor.state

    again = monitor.observe()
    assert again.observations == []
    assert not again.has_next_state
    assert monitor.state is stored

    os.utime(path)  # same content, new mtime
    touched = monitor.observe()
    assert touched.observations == []
    assert touched.has_next_state
    assert touched.next_state["fingerprints"] == stored["fingerprints"]
    assert touched.next_state["stats"][str(path)][1] == os.stat(path).st_mtime_ns

    # A state of an older shape (no stat keys) is handed back with them.
    monitor.state = {"fingerprints": stored["fingerprints"]}
    upgraded = monitor.observe()
    assert upgraded.observations == []
    assert upgraded.has_next_state
    assert set(upgraded.next_state["stats"]) == {str(path)}

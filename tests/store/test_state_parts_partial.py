"""A fresh ``daemon once`` reads only the folders whose token moved.

The state of a file-fingerprint monitor is stored one part per folder, with each
folder's token (its files' paths and stat keys) in one more part. A runtime that
remembers nothing, as a new process, walks the tree, compares the tokens and reads the
parts of the folders that moved alone; what it reports and stores is what reading the
whole state would give. Real SQLite, the real runtime; the store's two readers are
wrapped to record what is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from agentmonitors.sources.file_fingerprint.folders import INDEX_PART, read_index
from agentmonitors.store import state_parts
from tests.store.test_state_parts import Tree


class Reads:
    """What the store was asked for: whole states, and named parts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.whole = 0
        self.named: list[list[str]] = []
        whole, named = state_parts.read, state_parts.read_named

        def read(*args: Any) -> state_parts.PartedState:
            self.whole += 1
            return whole(*args)

        def read_named(*args: Any) -> dict[str, str] | None:
            self.named.append(sorted(args[3]))
            return named(*args)

        monkeypatch.setattr(state_parts, "read", read)
        monkeypatch.setattr(state_parts, "read_named", read_named)

    def clear(self) -> None:
        self.whole = 0
        self.named = []


def fresh_tick(tree: Tree) -> list[str]:
    """A tick of a runtime that remembers nothing; the events' object keys."""
    tree.runtime = tree.fresh_runtime()
    ids = tree.tick().emitted_event_ids
    marks = ",".join("?" * len(ids))
    with tree.db.read() as conn:
        rows = conn.execute(f"SELECT object_key FROM monitor_events WHERE id IN ({marks})", ids)
        return sorted(row[0] for row in rows)


def test_a_fresh_tick_reads_only_the_folders_that_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = Tree(tmp_path)
    reads = Reads(monkeypatch)
    try:
        tree.tick()  # the baseline
        src = tree.workspace / "src"
        edited, gone, new = src / "d1" / "f2.txt", src / "d3" / "f0.txt", src / "d9" / "n.txt"
        edited.write_text("edited\n")
        gone.unlink()
        new.parent.mkdir()
        new.write_text("new\n")
        reads.clear()

        assert fresh_tick(tree) == sorted(map(str, (edited, gone, new)))
        assert reads.whole == 0
        # The tokens, then the three folders that moved (one of them new: no part yet).
        assert reads.named == [
            [INDEX_PART],
            sorted([tree.folder(1), tree.folder(3), str(new.parent)]),
        ]
        # What is stored is the whole truth, as a full read finds it.
        assert tree.stored()[1]["fingerprints"] == tree.truth()

        # Settled and untouched: the tokens are read, and no folder.
        reads.clear()
        tree.clock.advance(1)
        assert fresh_tick(tree) == []
        assert reads.whole == 0
        assert reads.named in ([], [[INDEX_PART]])
    finally:
        tree.db.close()


def test_a_rewrite_that_restores_size_and_mtime_still_moves_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``touch -r``, ``rsync -t``, an archive: same size, same mtime, new content. The
    ctime in the stat key moves the folder's token, so the change is found."""
    tree = Tree(tmp_path)
    Reads(monkeypatch)
    try:
        tree.tick()
        path = tree.workspace / "src" / "d2" / "f4.txt"
        before = os.stat(path)
        path.write_text("2/X\n")  # the same size as "2/4\n"
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert os.stat(path).st_size == before.st_size
        assert fresh_tick(tree) == [str(path)]
    finally:
        tree.db.close()


def test_a_folder_hashed_while_unsettled_has_no_token_and_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file hashed within the racy window of its last write keeps no stat key, so its
    folder keeps no token: a same-tick rewrite could not hide behind it."""
    tree = Tree(tmp_path)
    reads = Reads(monkeypatch)
    try:
        tree.tick()
        path = tree.workspace / "src" / "d0" / "f1.txt"
        path.write_text("changed\n")
        settled_clock = tree.fresh_runtime
        tree.fresh_runtime = lambda: unsettled_runtime(tree)
        assert fresh_tick(tree) == [str(path)]
        with tree.db.read() as conn:
            index = state_parts.read_named(conn, "files", str(tree.workspace), [INDEX_PART])
        assert index is not None
        tokens = read_index(index[INDEX_PART])
        assert tokens is not None
        assert tokens[tree.folder(0)] is None
        assert all(tokens[tree.folder(i)] for i in range(1, 5))

        # Nothing changed since, yet that folder is read and compared again.
        tree.fresh_runtime = settled_clock
        reads.clear()
        assert fresh_tick(tree) == []
        assert reads.named == [[INDEX_PART], [tree.folder(0)]]
        assert reads.whole == 0
    finally:
        tree.db.close()


def unsettled_runtime(tree: Tree) -> Any:
    """A fresh runtime whose source finds every file it hashes unsettled."""
    registry = SourceRegistry()
    # A wall clock at the epoch: every file's last write is "just now", never settled.
    registry.register(FileFingerprintSource(lambda: 0))
    return workspace_runtime(tree.db, str(tree.workspace), registry, clock=tree.clock)


def test_a_name_that_is_not_utf8_is_compared_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose name is stored escaped (``\\xff``) is read through its real name in
    the folder that moved, as a whole comparison reads it."""
    tree = Tree(tmp_path)
    reads = Reads(monkeypatch)
    try:
        folder = os.fsencode(tree.folder(1))
        real = os.path.join(folder, b"caf\xe9.txt")
        with open(real, "wb") as handle:
            handle.write(b"before\n")
        tree.tick()
        with open(real, "wb") as handle:
            handle.write(b"after, longer\n")
        reads.clear()
        assert fresh_tick(tree) == [tree.folder(1) + "/caf\\xe9.txt"]
        assert reads.whole == 0
        assert reads.named == [[INDEX_PART], [tree.folder(1)]]
    finally:
        tree.db.close()

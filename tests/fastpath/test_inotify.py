"""The one inotify binding, used by the daemon's file events and the follower's watch.

It is held to the kernel's behaviour: the events, in their order, that a set of
changes makes.
"""

from __future__ import annotations

import errno
import os
import re
import select
import sys
from pathlib import Path

import pytest

import agentmonitors
from agentmonitors.fastpath.inotify import (
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_IGNORED,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    Inotify,
)
from agentmonitors.sources.file_events_inotify import WATCH_MASK, default_notifier
from agentmonitors.transports.file_watch import FileWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

SRC = Path(agentmonitors.__file__).parent
# A call into libc's inotify, or the third-party binding the daemon used before.
BINDING = re.compile(r"inotify_init1|inotify_add_watch|^\s*(from|import) inotify_simple", re.M)


def changes(folder: Path) -> None:
    (folder / "a.txt").write_text("one")
    with (folder / "a.txt").open("a") as handle:
        handle.write("two")
    os.replace(folder / "a.txt", folder / "b.txt")
    (folder / "sub").mkdir()
    (folder / "b.txt").unlink()


def test_both_watchers_use_the_one_binding(tmp_path: Path) -> None:
    homes = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if BINDING.search(path.read_text(encoding="utf-8"))
    )
    assert homes == ["fastpath/inotify.py"]
    notifier = default_notifier()
    try:
        assert isinstance(notifier, Inotify)
    finally:
        notifier.close()
    (tmp_path / "enable.md").write_text("x")
    watch = FileWatch(str(tmp_path / "enable.md"))
    try:
        assert watch.fd is not None
        assert not watch.changed()
        (tmp_path / "other.md").write_text("y")
        assert not watch.changed()  # another file of the folder
        (tmp_path / "enable.md").write_text("z")
        assert select.select([watch.fd], [], [], 5)[0] == [watch.fd]
        assert watch.changed()
        assert not watch.changed()  # drained
    finally:
        watch.close()
    assert watch.fd is None
    assert FileWatch(str(tmp_path / "missing" / "enable.md")).fd is None


def test_events_are_the_kernels(tmp_path: Path) -> None:
    inotify = Inotify()
    try:
        assert inotify.read() == []  # nothing queued: no wait
        wd = inotify.add_watch(str(tmp_path), WATCH_MASK)
        assert inotify.add_watch(str(tmp_path), WATCH_MASK) == wd  # same inode, same wd
        changes(tmp_path)
        events = [(event.wd, event.mask, event.name) for event in inotify.read()]
        assert events == [
            (wd, IN_CREATE, "a.txt"),
            (wd, IN_MODIFY, "a.txt"),
            (wd, IN_CLOSE_WRITE, "a.txt"),
            (wd, IN_MODIFY, "a.txt"),
            (wd, IN_CLOSE_WRITE, "a.txt"),
            (wd, IN_MOVED_FROM, "a.txt"),
            (wd, IN_MOVED_TO, "b.txt"),
            (wd, IN_CREATE | IN_ISDIR, "sub"),
            (wd, IN_DELETE, "b.txt"),
        ]
        inotify.rm_watch(wd)
        assert [(event.wd, event.mask) for event in inotify.read()] == [(wd, IN_IGNORED)]
        with pytest.raises(FileNotFoundError) as missing:
            inotify.add_watch(str(tmp_path / "missing"), WATCH_MASK)
        assert missing.value.errno == errno.ENOENT
        assert missing.value.filename == str(tmp_path / "missing")
    finally:
        inotify.close()
    with pytest.raises(ValueError, match="closed"):
        inotify.fileno()

"""File-change hints: watch roots, the hint filter, and real inotify and watchfiles
watchers (watcher limits simulated at a limit the test sets, overflows at the read)."""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentmonitors.sources.file_events_inotify import IN_Q_OVERFLOW, default_notifier
from agentmonitors.sources.file_hints import (
    HINTED_PATHS_MAX,
    NO_EVENTS_ENV,
    FileHintWatcher,
    hint_filter,
    outermost,
    watch_roots,
)


def test_watch_roots_are_literal_prefixes_or_their_nearest_existing_ancestor(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / "docs" / "api").mkdir(parents=True)
    (ws / "src").mkdir()
    config = {
        "globs": ["docs/api/**/*.md", "docs/*.md", "src/*.py", "future/deep/*.txt"],
        "cwd": ".",
    }
    assert watch_roots(config, str(ws)) == [str(ws)]  # future/ does not exist yet
    config["globs"] = ["docs/api/**/*.md", "docs/*.md", "src/*.py"]
    assert watch_roots(config, str(ws)) == [str(ws / "docs"), str(ws / "src")]
    assert watch_roots({"globs": "README.md"}, str(ws)) == [str(ws)]
    assert watch_roots({"globs": "{docs,src}/*"}, str(ws)) == [str(ws / "docs"), str(ws / "src")]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert watch_roots({"globs": f"{outside}/**"}, str(ws)) == [str(outside)]
    assert watch_roots({"globs": "*.md", "cwd": "docs"}, str(ws)) == [str(ws / "docs")]


def test_watch_roots_of_an_invalid_config_are_empty(tmp_path: Path) -> None:
    assert watch_roots({}, str(tmp_path)) == []
    assert watch_roots({"globs": 3}, str(tmp_path)) == []
    assert watch_roots({"globs": ["*.md", ""]}, str(tmp_path)) == []
    assert watch_roots({"globs": "*.md", "cwd": 5}, str(tmp_path)) == []


def test_outermost_drops_nested_roots() -> None:
    assert outermost(["/a/b", "/a", "/ab", "/c/d", "/c/d/e"]) == ["/a", "/ab", "/c/d"]


def test_hint_filter_skips_existing_files_the_globs_do_not_match(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    md = tmp_path / "docs" / "a.md"
    md.write_text("a")
    py = tmp_path / "docs" / "a.py"
    py.write_text("p")
    skip = tmp_path / "docs" / "skip.md"
    skip.write_text("s")
    matters = hint_filter({"globs": "docs/**/*.md", "ignore": "docs/skip.md"}, str(tmp_path))
    assert matters(str(md))
    assert not matters(str(py))
    assert not matters(str(skip))
    assert matters(str(tmp_path / "docs"))  # a folder may hold matches
    assert matters(str(tmp_path / "docs" / "gone.py"))  # may have been tracked


class Hints:
    """Collects hints and lets a test wait for the next one."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[set[str]] = asyncio.Queue()
        self.paths: dict[str, set[str] | None] = {}

    def __call__(self, hinted: Mapping[str, frozenset[str] | None]) -> None:
        for monitor_id, paths in hinted.items():
            known = self.paths.get(monitor_id, set())
            self.paths[monitor_id] = None if paths is None or known is None else known | paths
        self.queue.put_nowait(set(hinted))

    async def next(self, timeout: float = 2.0) -> set[str]:
        return await asyncio.wait_for(self.queue.get(), timeout)

    async def none_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.queue.get(), seconds)
        except TimeoutError:
            return True
        return False


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["inotify", "watchfiles"])
def test_a_file_write_hints_the_monitors_whose_roots_hold_it(tmp_path: Path, backend: str) -> None:
    docs = tmp_path / "docs"
    src = tmp_path / "src"
    docs.mkdir()
    src.mkdir()

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints, backend=backend)
        try:
            await watcher.update({"docs": [str(docs)], "src": [str(src)], "all": [str(tmp_path)]})
            assert watcher.available
            assert watcher.problem is None
            assert watcher.roots == (str(tmp_path),)
            await asyncio.sleep(0.1)
            (docs / "a.md").write_text("hello")
            assert await hints.next() == {"docs", "all"}
            assert hints.paths["docs"] == {str(docs / "a.md")}
            (src / "deep").mkdir()
            await asyncio.sleep(0.2)
            while not hints.queue.empty():
                hints.queue.get_nowait()
            (src / "deep" / "x.py").write_text("x")
            assert await hints.next() <= {"src", "all"}
        finally:
            await watcher.close()
        assert watcher.roots == ()

    asyncio.run(scenario())


@pytest.mark.slow
def test_git_internals_and_inbox_database_never_hint(tmp_path: Path) -> None:
    (tmp_path / ".git" / "objects").mkdir(parents=True)

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints)
        try:
            await watcher.update({"m": [str(tmp_path)]})
            await asyncio.sleep(0.1)
            (tmp_path / ".git" / "index").write_text("i")
            (tmp_path / ".git" / "objects" / "ab").write_text("o")
            (tmp_path / "inbox.db").write_text("db")
            (tmp_path / "inbox.db-wal").write_text("wal")
            assert await hints.none_within(0.5)
            (tmp_path / "real.txt").write_text("r")
            assert await hints.next() == {"m"}
        finally:
            await watcher.close()

    asyncio.run(scenario())


@pytest.mark.slow
def test_filters_narrow_hints(tmp_path: Path) -> None:
    config = {"globs": "**/*.md"}

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints)
        try:
            await watcher.update(
                {"md": watch_roots(config, str(tmp_path))},
                {"md": hint_filter(config, str(tmp_path))},
            )
            await asyncio.sleep(0.1)
            (tmp_path / "code.py").write_text("p")
            assert await hints.none_within(0.5)
            (tmp_path / "notes.md").write_text("n")
            assert await hints.next() == {"md"}
        finally:
            await watcher.close()

    asyncio.run(scenario())


@pytest.mark.slow
def test_update_moves_the_watch_to_the_new_roots(tmp_path: Path) -> None:
    first = tmp_path / "first"
    second = tmp_path / "second"
    first.mkdir()
    second.mkdir()

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints)
        try:
            await watcher.update({"m": [str(first)]})
            running = watcher._tree or watcher._task
            assert running is not None
            await watcher.update({"m": [str(first)], "n": [str(first / "sub")]})
            assert (watcher._tree or watcher._task) is running  # same root set: no restart
            await watcher.update({"m": [str(second)]})
            assert (watcher._tree or watcher._task) not in (None, running)
            assert watcher.roots == (str(second),)
            await asyncio.sleep(0.1)
            (first / "old.txt").write_text("o")
            assert await hints.none_within(0.5)
            (second / "new.txt").write_text("n")
            assert await hints.next() == {"m"}
            await watcher.update({})
            assert watcher.roots == ()
        finally:
            await watcher.close()

    asyncio.run(scenario())


def test_each_hinted_monitor_gets_its_changed_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Disabled events still record the targets: the dispatch is tested without a watcher.
    monkeypatch.setenv(NO_EVENTS_ENV, "1")
    docs, src = tmp_path / "docs", tmp_path / "src"
    docs.mkdir()
    src.mkdir()
    hints = Hints()

    async def scenario() -> None:
        watcher = FileHintWatcher(hints)
        await watcher.update(
            {"docs": [str(docs)], "src": [str(src)], "md": [str(tmp_path)]},
            {"md": hint_filter({"globs": "**/*.md"}, str(tmp_path))},
        )
        (docs / "a.md").write_text("a")
        (src / "b.py").write_text("b")
        watcher._dispatch([str(docs / "a.md"), str(src / "b.py"), str(src / "gone.md")])
        assert hints.paths == {
            "docs": {str(docs / "a.md")},
            "src": {str(src / "b.py"), str(src / "gone.md")},
            # b.py is an existing file the globs do not match: not its business.
            "md": {str(docs / "a.md"), str(src / "gone.md")},
        }
        # A batch past the cap hints "unknown": one walk costs less than each path.
        hints.paths.clear()
        many = [str(src / f"f{index}.py") for index in range(HINTED_PATHS_MAX + 1)]
        watcher._dispatch(many)
        assert hints.paths == {"src": None, "md": None}
        await watcher.close()

    asyncio.run(scenario())


def test_disabled_by_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_EVENTS_ENV, "1")

    async def scenario() -> None:
        watcher = FileHintWatcher(lambda ids: None)
        assert not watcher.available
        assert watcher.problem is not None
        assert NO_EVENTS_ENV in watcher.problem
        await watcher.update({"m": [str(tmp_path)]})
        assert watcher.roots == ()
        await watcher.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("backend", ["watchfiles", "inotify"])
def test_a_watcher_that_cannot_start_reports_a_problem(tmp_path: Path, backend: str) -> None:
    missing = tmp_path / "missing"

    async def scenario() -> None:
        watcher = FileHintWatcher(lambda ids: None, backend=backend)
        await watcher.update({"m": [str(missing)]})
        assert not watcher.available  # known as soon as update returns
        assert watcher.problem is not None
        if backend == "watchfiles":
            assert "FileNotFoundError" in watcher.problem
            assert watcher.roots == ()
        else:  # the missing root is rescanned (and watched once it exists)
            assert f"cannot watch {missing}" in watcher.problem
        await watcher.update({"m": [str(missing)]})  # same roots: no immediate retry
        assert not watcher.available
        await watcher.update({"m": [str(tmp_path)]})
        assert watcher.available
        assert watcher.roots == (str(tmp_path),)
        await watcher.close()

    asyncio.run(scenario())


class DroppingNotifier:
    """A real inotify instance whose next read, once armed, loses its events to a
    queue overflow, as the kernel does when the queue is full."""

    def __init__(self) -> None:
        self.real = default_notifier()
        self.overflow_next = False

    def fileno(self) -> int:
        return self.real.fileno()

    def add_watch(self, path: str, mask: int) -> int:
        return self.real.add_watch(path, mask)

    def rm_watch(self, wd: int) -> None:
        self.real.rm_watch(wd)

    def read(self, timeout: int | None = None) -> list[Any]:
        events = list(self.real.read(timeout))
        if self.overflow_next and events:
            self.overflow_next = False
            return [SimpleNamespace(wd=-1, mask=IN_Q_OVERFLOW, cookie=0, name="")]
        return events

    def close(self) -> None:
        self.real.close()


async def drain(hints: Hints) -> None:
    """Wait out pending hints (the ones of a previous step)."""
    while not await hints.none_within(0.1):
        pass


@pytest.mark.slow
def test_refused_watches_are_rescanned_until_watches_are_free(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "tree"
    (root / "a" / "sub").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "c").mkdir()
    caplog.set_level(logging.INFO, logger="agentmonitors.hints")

    async def scenario() -> None:
        hints = Hints()
        targets = {name: [str(root / name)] for name in ("a", "b", "c")}
        # Three watches for four folders (a, a/sub, b, then c is refused): the kernel's
        # ENOSPC, at a limit the test sets.
        watcher = FileHintWatcher(hints, backend="inotify", watch_limit=3, rescan_s=0.05)
        try:
            await watcher.update(targets)
            state = watcher.state()
            assert state["mode"] == "rescanning"
            assert state["watches"] == 3
            assert state["unwatchedFolders"] == 1
            assert state["unwatchedExamples"] == [str(root / "c")]
            assert watcher.problem is not None
            assert "watches refused" in watcher.problem
            # The unwatched folder is rescanned without any event...
            assert await hints.next() == {"c"}
            assert await hints.next() == {"c"}
            # ...while the watched ones hint on their events.
            (root / "b" / "x.txt").write_text("x")
            while (hinted := await hints.next()) == {"c"}:
                pass
            assert hinted == {"b"}
            # A deleted folder frees its watch: the next rescan watches c.
            shutil.rmtree(root / "a" / "sub")
            await asyncio.sleep(0.3)
            assert watcher.state()["mode"] == "events"
            assert watcher.problem is None
            await drain(hints)
            (root / "c" / "y.txt").write_text("y")
            assert await hints.next() == {"c"}
            assert await hints.none_within(0.2)  # no more rescans
        finally:
            await watcher.close()

    asyncio.run(scenario())
    said = [record.getMessage() for record in caplog.records]
    assert sum("rescanned every" in line for line in said) == 1, said
    assert sum("watched again" in line for line in said) == 1, said


@pytest.mark.slow
def test_a_queue_overflow_rescans_and_watches_the_folders_made_meanwhile(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = DroppingNotifier()
    caplog.set_level(logging.INFO, logger="agentmonitors.hints")

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints, backend="inotify", notifier_factory=lambda: notifier)
        try:
            await watcher.update({"m": [str(tmp_path)]})
            notifier.overflow_next = True
            (tmp_path / "new").mkdir()  # its event is lost
            (tmp_path / "new" / "f.txt").write_text("f")
            assert await hints.next() == {"m"}  # the rescan of every root
            state = watcher.state()
            assert state["overflows"] == 1
            assert state["lastOverflowAt"]
            assert state["mode"] == "events"
            await drain(hints)
            # The folder made while events were lost has its watch.
            (tmp_path / "new" / "g.txt").write_text("g")
            assert await hints.next() == {"m"}
        finally:
            await watcher.close()

    asyncio.run(scenario())
    said = [record.getMessage() for record in caplog.records]
    assert sum("overflowed" in line for line in said) == 1, said


@pytest.mark.slow
def test_inotify_follows_new_moved_and_deleted_folders(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "src" / "old").mkdir(parents=True)
    (root / ".git").mkdir()

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints, backend="inotify")
        try:
            await watcher.update({"m": [str(root)]})
            assert watcher.state()["watches"] == 3  # .git is never watched
            (root / "src" / "new" / "deep").mkdir(parents=True)
            await drain(hints)
            (root / "src" / "new" / "deep" / "a.txt").write_text("a")
            assert await hints.next() == {"m"}
            await drain(hints)
            (root / "src" / "old").rename(root / "moved")
            assert await hints.next() == {"m"}
            await drain(hints)
            (root / "moved" / "b.txt").write_text("b")  # watched under its new path
            assert await hints.next() == {"m"}
            await drain(hints)
            shutil.rmtree(root / "src")
            assert await hints.next() == {"m"}
            assert watcher.state()["watches"] == 2  # the root and moved/
        finally:
            await watcher.close()

    asyncio.run(scenario())


@pytest.mark.slow
def test_without_inotify_watchfiles_watches_instead(tmp_path: Path) -> None:
    def no_inotify() -> Any:
        raise ImportError("no inotify here")

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints, backend="inotify", notifier_factory=no_inotify)
        try:
            await watcher.update({"m": [str(tmp_path)]})
            assert watcher.state() == {"backend": "watchfiles", "mode": "events"}
            await asyncio.sleep(0.1)
            (tmp_path / "a.txt").write_text("a")
            assert await hints.next() == {"m"}
        finally:
            await watcher.close()

    asyncio.run(scenario())

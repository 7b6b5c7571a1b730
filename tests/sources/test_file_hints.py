"""File-change hints: watch roots, the hint filter, and a real watchfiles watcher."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

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
def test_a_file_write_hints_the_monitors_whose_roots_hold_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    src = tmp_path / "src"
    docs.mkdir()
    src.mkdir()

    async def scenario() -> None:
        hints = Hints()
        watcher = FileHintWatcher(hints)
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
            task = watcher._task
            await watcher.update({"m": [str(first)], "n": [str(first / "sub")]})
            assert watcher._task is task  # same root set: no restart
            await watcher.update({"m": [str(second)]})
            assert watcher._task is not task
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


def test_a_watcher_that_cannot_start_reports_a_problem(tmp_path: Path) -> None:
    missing = tmp_path / "missing"

    async def scenario() -> None:
        watcher = FileHintWatcher(lambda ids: None)
        await watcher.update({"m": [str(missing)]})
        assert not watcher.available  # known as soon as update returns
        assert watcher.problem is not None
        assert "FileNotFoundError" in watcher.problem
        assert watcher.roots == ()
        await watcher.update({"m": [str(missing)]})  # same roots: no immediate retry
        assert not watcher.available
        await watcher.update({"m": [str(tmp_path)]})
        assert watcher.available
        assert watcher.roots == (str(tmp_path),)
        await watcher.close()

    asyncio.run(scenario())

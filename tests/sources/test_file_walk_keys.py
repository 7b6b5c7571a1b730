"""The file-fingerprint walk keeps each file's 4-integer stat key, not its stat result.

A whole ``os.stat_result`` is ~0.5 KB more a file than the key the source compares
(size, mtime_ns, ctime_ns, inode): over 100,000 files, most of the walk's peak memory.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from agentmonitors.sources.file_globs import Confinement, compile_patterns, confined_stat_keys

FILES = 1_000


def tree(root: Path) -> list[Path]:
    paths = []
    for index in range(FILES):
        path = root / "src" / f"d{index // 100}" / f"f{index:03}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{index}\n")
        paths.append(path)
    return paths


def test_the_walk_keeps_each_files_stat_key_only(tmp_path: Path) -> None:
    paths = tree(tmp_path)
    globs = compile_patterns(["src/**/*.txt"], str(tmp_path))
    confinement = Confinement(str(tmp_path), ())

    tracemalloc.start()
    try:
        files, skipped = confined_stat_keys(globs, [], confinement)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert skipped == []
    assert list(files) == sorted(str(path) for path in paths)
    for path in paths[:: FILES // 10]:
        info = os.stat(path)
        assert files[str(path)] == [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
    # The path, its dict slot and a list of four integers; a kept stat result is
    # ~800 bytes a file.
    assert peak / FILES < 500

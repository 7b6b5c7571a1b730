"""Where a long-running command's memory goes: run it traced, and compare two moments.

    python benchmarks/memory_probe.py run OUT -- agentmonitors daemon run ...
    kill -USR2 <pid>          # each signal writes OUT/probe-N.pickle and a line of OUT/probe.jsonl
    python benchmarks/memory_probe.py compare OUT/probe-2.pickle OUT/probe-5.pickle

Each probe records four views, because RSS can grow where ``tracemalloc`` cannot see:
Python's own allocations (``tracemalloc``), SQLite's page caches and statements
(``sqlite3_memory_used``, allocated outside Python), the C heap as glibc sees it
(``mallinfo2``: in use, free but kept, memory-mapped), and the live objects by type.
``compare`` prints the lines whose traced memory grew most between two probes.
``run --untraced`` leaves ``tracemalloc`` off, so RSS is the command's own and each probe
records the other three views only.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import ctypes.util
import gc
import json
import pickle
import signal
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

FRAMES = 12


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _c_heap() -> dict[str, int]:
    """glibc's view of the heap, in KiB; empty where glibc is not the allocator."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    return {
        "arenaKib": info.arena // 1024,
        "inUseKib": info.uordblks // 1024,
        "freeKeptKib": info.fordblks // 1024,
        "mmappedKib": info.hblkhd // 1024,
    }


def _sqlite_kib() -> int | None:
    """Bytes SQLite holds now (page caches, schemas, statements), from the loaded library."""
    try:
        import sqlite3  # noqa: F401  (loads the library this process uses)

        library = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
        library.sqlite3_memory_used.restype = ctypes.c_int64
        return int(library.sqlite3_memory_used()) // 1024
    except (OSError, AttributeError):
        return None


_PYMALLOC_FIELDS = {
    "# arenas allocated current": "arenasCurrent",
    "# arenas highwater mark": "arenasHighwater",
    "# arenas reclaimed": "arenasReclaimed",
    "# bytes in allocated blocks": "allocatedBlocksKib",
    "# bytes in available blocks": "availableBlocksKib",
}


def _pymalloc() -> dict[str, int]:
    """pymalloc's arenas and blocks (``sys._debugmallocstats``), sizes in KiB.

    RSS can grow while the live objects stay flat when long-lived blocks pin arenas
    that are otherwise free: then arenas and available blocks grow, allocated ones not.
    The statistics go to the C-level stderr, so it is pointed at a file for the call.
    """
    import os
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile("w+") as capture:
            os.dup2(capture.fileno(), 2)
            try:
                sys._debugmallocstats()
            finally:
                os.dup2(saved, 2)
            capture.seek(0)
            text = capture.read()
    finally:
        os.close(saved)
    found: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition("=")
        key = _PYMALLOC_FIELDS.get(name.strip())
        if key is None and "unused pools" in name:
            key = "unusedPoolsKib"
        if key is None:
            continue
        number = int(value.strip().replace(",", ""))
        found[key] = number // 1024 if key.endswith("Kib") else number
    return found


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _object_counts(top: int = 25) -> dict[str, int]:
    counts = collections.Counter(type(item).__qualname__ for item in gc.get_objects())
    return dict(counts.most_common(top))


def _probe(out: Path, number: int) -> None:
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),)
        )
        with (out / f"probe-{number}.pickle").open("wb") as handle:
            pickle.dump(snapshot, handle)
    current, peak = tracemalloc.get_traced_memory()
    record: dict[str, Any] = {
        "probe": number,
        "at": time.time(),
        "rssKib": _rss_kib(),
        "tracedKib": current // 1024,
        "tracedPeakKib": peak // 1024,
        "sqliteKib": _sqlite_kib(),
        "cHeap": _c_heap(),
        "pymalloc": _pymalloc(),
        "objects": _object_counts(),
        "gcObjects": len(gc.get_objects()),
    }
    with (out / "probe.jsonl").open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def run(out: Path, argv: list[str], traced: bool = True) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if traced:
        tracemalloc.start(FRAMES)
    probes = iter(range(1, 1_000_000))

    def on_signal(_signum: int, _frame: object) -> None:
        _probe(out, next(probes))

    signal.signal(signal.SIGUSR2, on_signal)
    from agentmonitors.cli.main import main as cli_main

    sys.argv = ["agentmonitors", *argv]
    cli_main()


def compare(before: Path, after: Path, top: int) -> None:
    with before.open("rb") as handle:
        old = pickle.load(handle)
    with after.open("rb") as handle:
        new = pickle.load(handle)
    print(f"# by line, {before.name} -> {after.name}")
    for stat in new.compare_to(old, "lineno")[:top]:
        where = stat.traceback[0]
        print(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {where}")
    print(f"\n# by call stack (top {min(top, 8)})")
    for stat in new.compare_to(old, "traceback")[: min(top, 8)]:
        print(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format()[-2 * FRAMES :]:
            print(f"    {line}")
    total_old = sum(stat.size for stat in old.statistics("filename"))
    total_new = sum(stat.size for stat in new.statistics("filename"))
    print(f"\ntraced in all: {total_old / 1048576:.1f} -> {total_new / 1048576:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run an agentmonitors command, traced")
    run_parser.add_argument("out", type=Path)
    run_parser.add_argument(
        "--untraced",
        action="store_true",
        help="no tracemalloc: the probes record the C heap, SQLite and objects only, and"
        " RSS is the command's own",
    )
    run_parser.add_argument("argv", nargs=argparse.REMAINDER)
    compare_parser = commands.add_parser("compare", help="what grew between two probes")
    compare_parser.add_argument("before", type=Path)
    compare_parser.add_argument("after", type=Path)
    compare_parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.command == "run":
        argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if argv[:1] == ["agentmonitors"]:
            argv = argv[1:]
        run(args.out, argv, traced=not args.untraced)
    else:
        compare(args.before, args.after, args.top)


if __name__ == "__main__":
    main()

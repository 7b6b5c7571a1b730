"""A large first baseline is stored packed, and every file's first change after it is
still shown as a diff against what the baseline saw.

Driven as a user would: a project with a file-fingerprint monitor over more files than
``PACK_FROM_OBJECTS``, observed by real ``daemon once`` runs, read back through the real
``diff`` and ``snapshot`` verbs; the store is the real SQLite file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.paths import resolve_db_path
from agentmonitors.runtime.baselines import PACK_FROM_OBJECTS
from agentmonitors.store import baseline_packs
from agentmonitors.store.database import Database
from agentmonitors.store.queries import insert_snapshot, latest_snapshot
from agentmonitors.store.retention import Pruner
from tests.conftest import CliResult
from tests.security.hostile import add_monitor, agentmonitors, once_json
from tests.waiting import wait_for

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow

FOLDERS = ("alpha", "beta", "gamma")
PER_FOLDER = 60  # 180 files: over PACK_FROM_OBJECTS, in several packs
MONITOR = (
    "---\nwatch:\n  type: file-fingerprint\n  globs: 'tree/**/*.txt'\n  interval: 1s\n"
    "urgency: low\n---\nRead.\n"
)


def text_of(folder: str, index: int) -> str:
    # About 2 KB each, so 180 texts need several packs of PACK_BYTES.
    return "".join(f"{folder} {index} line {line}\n" for line in range(100))


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    for folder in FOLDERS:
        (isolated_environment / "tree" / folder).mkdir(parents=True)
        for index in range(PER_FOLDER):
            (isolated_environment / "tree" / folder / f"f{index:02}.txt").write_text(
                text_of(folder, index)
            )
    add_monitor(isolated_environment, "tree", MONITOR)
    return isolated_environment


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(resolve_db_path(str(root)))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def changed_once(root: Path) -> list[str]:
    """The events of the first ``daemon once`` after the monitor's 1 s interval."""
    ids: list[str] = wait_for(lambda: once_json(root)["emittedEventIds"], step=0.3)
    return ids


def diff_of(root: Path, event_id: str) -> str:
    ((diff,),) = rows(root, "SELECT diff_text FROM monitor_events WHERE id = ?", event_id)
    return str(diff)


def verb(root: Path, *args: str) -> dict[str, Any]:
    done = agentmonitors(root, *args, "--format", "json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_large_first_baseline_is_packed_and_each_first_change_is_a_diff(
    project: Path,
) -> None:
    assert len(FOLDERS) * PER_FOLDER >= PACK_FROM_OBJECTS
    assert once_json(project)["emittedEventIds"] == []  # the baseline
    # No row per file: a few packs hold every text.
    assert rows(project, "SELECT COUNT(*) FROM monitor_snapshots") == [(0,)]
    ((packs,),) = rows(project, "SELECT COUNT(*) FROM monitor_baseline_packs")
    assert 2 <= packs < len(FOLDERS) * PER_FOLDER // 10
    first = project / "tree" / "alpha" / "f00.txt"
    last = project / "tree" / "gamma" / f"f{PER_FOLDER - 1:02}.txt"
    first.write_text(text_of("alpha", 0).replace("alpha 0 line 7\n", "changed\n"))
    last.write_text(text_of("gamma", PER_FOLDER - 1) + "added\n")
    events = changed_once(project)
    diffs = sorted(diff_of(project, event) for event in events)
    assert diffs == ["+ 101: added", "- 8: alpha 0 line 7\n+ 8: changed"]
    # The agent's verbs read the packed baseline as the object's first version.
    diff = verb(project, "diff", "tree", "--object", str(first))
    assert diff["diff"] == "- 8: alpha 0 line 7\n+ 8: changed"
    assert diff["from"]["baseline"] is True
    unchanged = project / "tree" / "beta" / "f30.txt"
    shot = verb(project, "snapshot", "tree", "--object", str(unchanged))
    assert (shot["content"], shot["eventId"], shot["baseline"]) == (
        text_of("beta", 30),
        None,
        True,
    )


def test_a_second_baseline_compares_with_the_packs_and_stores_only_what_moved(
    project: Path,
) -> None:
    once_json(project)
    # The state is lost (another writer, a damaged row): the next look is a baseline.
    rows_before = rows(project, "SELECT COUNT(*) FROM monitor_baseline_packs")
    conn = sqlite3.connect(resolve_db_path(str(project)))
    with conn:
        conn.execute("DELETE FROM monitor_state")
    conn.close()
    moved = project / "tree" / "beta" / "f05.txt"
    moved.write_text("moved while nobody looked\n")
    assert once_json(project)["emittedEventIds"] == []  # a baseline again
    assert rows(project, "SELECT object_key, content FROM monitor_snapshots") == [
        (str(moved), "moved while nobody looked\n")
    ]
    assert rows(project, "SELECT COUNT(*) FROM monitor_baseline_packs") == rows_before
    moved.write_text("moved again\n")
    (event,) = changed_once(project)
    assert diff_of(project, event) == "- 1: moved while nobody looked\n+ 1: moved again"


def test_retention_drops_packed_texts_a_newer_snapshot_replaced(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "store.db"))
    day = 86_400_000
    texts = [(f"k{index:03}", f"{index}".ljust(300, ".")) for index in range(300)]
    with db.write() as conn:
        assert baseline_packs.write(conn, "/w", "m", texts, 0) >= 2
        for key in ("k010", "k290"):  # one in the first pack, one in the last
            insert_snapshot(
                conn,
                workspace="/w",
                monitor_id="m",
                object_key=key,
                event_id="e-" + key,
                content="changed",
                now_ms=day,
            )
    assert Pruner(db, cutoff_s=10 * day // 1000).run() == {"monitor_baseline_packs": 2}
    with db.read() as conn:
        latest = {key: latest_snapshot(conn, "/w", "m", key) for key, _ in texts}
        assert latest == {
            key: "changed" if key in ("k010", "k290") else text for key, text in texts
        }
        assert len(baseline_packs.keys(conn, "/w", "m")) == 298
    # A second pass finds nothing more to drop.
    assert Pruner(db, cutoff_s=10 * day // 1000).run() == {}
    # verify's scratch clean-up takes an object's every trace, its packed text too.
    with db.write() as conn:
        assert baseline_packs.forget_key(conn, "/w", "m", "k000") == 1
        assert latest_snapshot(conn, "/w", "m", "k000") is None
        assert latest_snapshot(conn, "/w", "m", "k001") == texts[1][1]
    db.close()


def test_a_rendered_shape_packs_the_artifact_its_first_change_is_diffed_against(
    project: Path,
) -> None:
    add_monitor(
        project,
        "tree",
        MONITOR.replace("urgency: low\n", "urgency: low\nshape:\n  render: rendered\n"),
    )
    once_json(project)
    assert rows(project, "SELECT COUNT(*) FROM monitor_snapshots") == [(0,)]
    path = project / "tree" / "beta" / "f07.txt"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text("rewritten\n")
    after = hashlib.sha256(b"rewritten\n").hexdigest()
    (event,) = changed_once(project)
    # The baseline kept the rendered artifact (hash and path), not the file's text.
    assert diff_of(project, event).startswith(
        f"- 2: - currentHash: {before}\n+ 2: - currentHash: {after}"
    )

"""``doctor`` runs ``PRAGMA quick_check`` and fails its database check on damage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agentmonitors.paths import resolve_db_path
from agentmonitors.store.database import Database
from tests.conftest import CliResult

PAGE = 4096


def test_doctor_checks_the_database_file_and_names_damage(
    isolated_environment: Path, run_cli: Callable[..., CliResult]
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    db_path = resolve_db_path(str(isolated_environment))
    with Database(db_path) as db, db.write() as conn:
        for number in range(400):
            conn.execute(
                "INSERT INTO observation_history (id, monitor_id, source_name, observation_data,"
                " result, created_at) VALUES (?, 'notes', 'file-fingerprint', ?, 'ok', ?)",
                (f"h{number:04d}", "x" * 200, 1_796_120_400 + number),
            )
    with Database(db_path) as db:
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    healthy = json.loads(run_cli("doctor", "--format", "json").out)
    (check,) = [item for item in healthy["checks"] if item["name"] == "database"]
    assert check["status"] == "pass", check
    assert healthy["database"]["quickCheck"] == "ok"
    assert "quick_check ok" in check["detail"]

    # Damage the headers of the history table's last pages; the file still opens.
    with open(db_path, "r+b") as handle:
        pages = handle.seek(0, 2) // PAGE
        for page in range(pages - 3, pages):
            handle.seek(page * PAGE)
            handle.write(b"\xff" * 16)
    report = run_cli("doctor", "--format", "json")
    damaged = json.loads(report.out)
    (check,) = [item for item in damaged["checks"] if item["name"] == "database"]
    assert check["status"] == "fail", check
    assert damaged["database"]["quickCheck"] != "ok"
    assert f"move {db_path} aside" in check["remediation"]
    assert report.code == 1

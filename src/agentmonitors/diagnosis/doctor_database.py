"""``doctor``'s database check: its size, the oldest event kept, the retention age,
``PRAGMA quick_check``, and a disk too full to write (docs/durability.md)."""

from __future__ import annotations

from typing import Any

from agentmonitors.runtime.human import human_duration
from agentmonitors.store.database import Database
from agentmonitors.store.health import database_facts, human_bytes, quick_check
from agentmonitors.store.retention import retention_setting
from agentmonitors.workspace import enable_file_path, read_local_state

_MOVE_ASIDE = (
    "stop the daemon, move {db_path} aside; the next Claude Code session here starts a fresh one"
)


def _check(status: str, detail: str, remediation: str | None = None) -> dict[str, Any]:
    return {"name": "database", "status": status, "detail": detail, "remediation": remediation}


def _retention(workspace: str) -> tuple[str, str | None]:
    """What the retention setting keeps, and why it is not understood (None when it is)."""
    written = read_local_state(workspace).retention
    keep = retention_setting(written)
    if keep is None:
        return "7d (the default)", (
            f"retention: {written!r} in {enable_file_path(workspace)} is not understood"
            " (expected off or <number>m|h|d|w, e.g. 7d)"
        )
    return (human_duration(keep) if keep > 0 else "forever (retention: off)"), None


def database_check(
    db: Database | None,
    workspace: str,
    db_path: str | None,
    problem: str | None = None,
    checked: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``database`` check and the facts the report carries under ``database``."""
    if problem is not None:
        detail = f"cannot read the database {db_path}: {problem}"
        return _check("fail", detail, _MOVE_ASIDE.format(db_path=db_path)), None
    if db is None or db_path is None:
        return _check("skip", "no database yet: the first session or daemon here creates it"), None
    facts = database_facts(db, db_path)
    facts["quickCheck"] = checked if checked is not None else quick_check(db)
    keeps, unclear = _retention(workspace)
    facts["retention"] = keeps
    detail = (
        f"{db_path}: {human_bytes(facts['sizeBytes'])}"
        f" (+ {human_bytes(facts['walBytes'])} write-ahead log),"
        f" oldest event {facts['oldestEventAt'] or 'none'}, keeps what is done with {keeps},"
        f" quick_check {facts['quickCheck']}"
    )
    status, remediation = "pass", None
    if unclear is not None:
        detail += f"; advisory: {unclear}"
    full = facts["diskFull"]
    if full is not None:
        status = "fail"
        detail = (
            f"disk full since {full['since']}: writes to {db_path} fail ({full['error']});"
            " nothing stored is lost, and writing resumes once space is freed; " + detail
        )
        remediation = f"free space on the disk that holds {db_path}"
    elif facts["quickCheck"] != "ok":
        status = "fail"
        remediation = _MOVE_ASIDE.format(db_path=db_path)
    return _check(status, detail, remediation), facts

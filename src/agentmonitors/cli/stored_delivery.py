"""``events list``, ``events ack`` and ``session list`` with no daemon: the database answers.

The database is the truth (docs/architecture.md, "The life of one event"): a listing
read from it is what the daemon would answer, and an acknowledgement written to it in
one write transaction (SQLite's write lock orders it against a daemon that starts
meanwhile) is what the daemon reads at its next request, since its cached unread rows
follow ``PRAGMA data_version``. The same delivery-layer functions the daemon calls do
the work, so an ack here moves what an ack through the daemon moves. No in-flight
delivery can hold a row while no daemon runs, so ack-all leaves nothing behind.

Free of click and typing, like the commands that call it.
"""

from __future__ import annotations

import os

from agentmonitors.daemon.delivery_methods import ack_reply, event_query
from agentmonitors.delivery import sessions
from agentmonitors.delivery.events import page_events
from agentmonitors.delivery.records import SessionNotFound
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.paths import resolve_db_path
from agentmonitors.store.database import Database, StoreError, is_memory
from agentmonitors.workspace import resolve_workspace

__all__ = [
    "NothingStored",
    "SessionNotFound",
    "StoreError",
    "notice_for",
    "stored_answer",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OFFLINE_LIST_NOTICE = "No daemon running — answered from the stored state."
OFFLINE_ACK_NOTICE = (
    "No daemon running — the acknowledgement is stored; the daemon honours it when it starts."
)


class NothingStored(Exception):
    """No database for this workspace: nothing to answer from."""


def notice_for(method: str) -> str:
    return OFFLINE_ACK_NOTICE if method == "events.ack" else OFFLINE_LIST_NOTICE


def stored_answer(method: str, params: dict[str, Any]) -> Any:
    """What the daemon would answer ``method`` with, from the workspace database.

    Raises :class:`NothingStored` when there is no database, and the delivery layer's
    ``SessionNotFound`` for an unknown session, as the daemon would.
    """

    db_path = resolve_db_path(resolve_workspace(None))
    if is_memory(db_path) or not os.path.isfile(db_path):
        raise NothingStored(db_path)
    with Database(db_path) as db:
        service = DeliveryService(db)
        if method == "session.list":
            return service.list_sessions()
        if method == "events.ack":
            return _ack(service, params)
        return _list(service, params)


def _ack(service: Any, params: dict[str, Any]) -> dict[str, Any]:
    return ack_reply(service.ack_counted(params["sessionId"], params.get("eventIds")))


def _list(service: Any, params: dict[str, Any]) -> Any:
    # The daemon's own reading of the request: the same filters, whoever answers.
    query = event_query(params)
    with service.db.read() as conn:
        sessions.get_session(conn, params["sessionId"])  # an unknown session is an error
        page = page_events(conn, query, params.get("limit"))
    return {"events": page.records, "total": page.total}

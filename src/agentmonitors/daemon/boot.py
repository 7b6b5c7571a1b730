"""The session whose ``session start`` booted the daemon, registered before the first tick."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.store.database import StoreError

if TYPE_CHECKING:
    from agentmonitors.delivery.service import DeliveryService

log = get_logger("agentmonitors.daemon")


def open_boot_session(
    delivery: DeliveryService, boot_session: tuple[str, str], workspace: str
) -> None:
    """Register ``(adapter, host session id)`` before anything is observed.

    Its ``session start`` opens it again once the socket answers (a resume: same row,
    same baseline); opening it here first is what puts the first tick's events, a
    command failing from the start among them, in that session. Other sessions still
    join late and see only what comes after them (docs/architecture.md, "Processes we
    start").
    """
    adapter, host_session_id = boot_session
    try:
        delivery.open_session(
            host_session_id, adapter=adapter, workspace_path=workspace, role="lead"
        )
    except (StoreError, ValueError) as error:
        # The hook registers it a moment later anyway; only the first tick's events miss it.
        log.warning("cannot register the booting session: %s", error)

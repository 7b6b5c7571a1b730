"""The ``watch.declare``, ``watch.list`` and ``watch.cancel`` IPC methods.

A declaration is checked in a fixed order (the session, then the source, the scope,
the frontmatter, the display name) and any failure registers nothing. Declaring
observes nothing either: the daemon is only woken so the watch's baseline is taken
at once rather than at the next poll.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentmonitors.catalog.ephemeral import DeclarationError, check_declaration, watch_definition
from agentmonitors.catalog.trust import is_approved, read_ledger, requirement_for
from agentmonitors.clock import Clock
from agentmonitors.daemon.server import Method, RequestError, params
from agentmonitors.delivery.records import SessionNotFound
from agentmonitors.delivery.watches import (
    WatchError,
    cancel_watch,
    declaring_session,
    list_watches,
    register_watch,
)
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.permit import approve_command
from agentmonitors.store.database import Database


def watch_methods(
    db: Database,
    registry: SourceRegistry,
    clock: Clock,
    workspace: str,
    on_declared: Callable[[str], None] | None = None,
) -> dict[str, Method]:
    """The method table entries for watches; ``on_declared`` gets each new watch's id."""

    async def declare(request: dict[str, Any]) -> Any:
        try:
            with db.write() as conn:
                session = declaring_session(conn, request["sessionId"], workspace)
                checked = check_declaration(
                    registry,
                    request["source"],
                    request["scope"],
                    request.get("urgency"),
                    request.get("displayName"),
                )
                row = register_watch(
                    conn,
                    session,
                    workspace=workspace,
                    source_name=request["source"],
                    scope=dict(request["scope"]),
                    band=(checked.band.lo, checked.band.hi),
                    instruction=request.get("instruction") or "",
                    display_name=request.get("displayName") or None,
                    now_ms=clock.now_ms(),
                )
        except (SessionNotFound, WatchError, DeclarationError) as error:
            raise RequestError(str(error)) from None
        if on_declared is not None:
            on_declared(row.id)
        record = row.to_json()
        if checked.warnings:
            record["warnings"] = checked.warnings
        waiting = _awaiting_approval(row, registry, workspace)
        if waiting is not None:
            record["awaitingApproval"] = waiting
        return record

    async def list_(request: dict[str, Any]) -> Any:
        try:
            with db.read() as conn:
                rows = list_watches(conn, request["sessionId"])
        except SessionNotFound as error:
            raise RequestError(str(error)) from None
        return [row.to_json() for row in rows]

    async def cancel(request: dict[str, Any]) -> Any:
        try:
            with db.write() as conn:
                row = cancel_watch(
                    conn, request["sessionId"], request["ephemeralId"], clock.now_ms()
                )
        except WatchError as error:
            raise RequestError(str(error)) from None
        return row.to_json()

    return {
        "watch.declare": Method(
            declare,
            params(
                sessionId=(str, True),
                source=(str, True),
                scope=(dict, True),
                urgency=(str, False),
                instruction=(str, False),
                displayName=(str, False),
            ),
        ),
        "watch.list": Method(list_, params(sessionId=(str, True))),
        "watch.cancel": Method(cancel, params(sessionId=(str, True), ephemeralId=(str, True))),
    }


def _awaiting_approval(row: Any, registry: SourceRegistry, workspace: str) -> str | None:
    """What a declared watch waits for before it runs, or None when it needs nothing.

    An agent's declaration passes the same approval ledger as a project's
    ``MONITOR.md`` (docs/security.md): a watch inside the project runs at once; one
    that runs a command, fetches a URL or reads outside waits for the user.
    """
    try:
        definition = watch_definition(
            row.id, row.source_name, row.scope, row.band, row.instruction, row.display_name
        )
        requirement = requirement_for(definition, workspace, registry)
    except ValueError as error:
        return f"it cannot run until its source says what it needs approved ({error})"
    if requirement is None or is_approved(requirement, read_ledger(workspace)):
        return None
    return (
        f"this watch {requirement.summary()}, so it runs only once the user approves it "
        f"with `{approve_command(row.id)}` (an agent cannot approve it)"
    )

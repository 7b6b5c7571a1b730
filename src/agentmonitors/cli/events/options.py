"""What the ``events`` commands share: ``--session`` and ``--scope``."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT
from agentmonitors.cli.quick_commands import scope_pairs


class _MissingSession(click.MissingParameter):
    """A missing ``--session`` says where to find one."""

    def format_message(self) -> str:
        return f"{super().format_message()}\n{SESSION_HINT}"


class SessionOption(click.Option):
    """``--session``: required, and its absence points at ``session list``."""

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        try:
            return super().process_value(ctx, value)
        except click.MissingParameter as error:
            raise _MissingSession(ctx=ctx, param=self) from error


session_option = click.option(
    "--session",
    "session_id",
    cls=SessionOption,
    required=True,
    help="AgentMon session id. " + SESSION_HINT,
    shell_complete=complete_session_id,
)


def parse_scope(raw: str | None) -> dict[str, str] | None:
    """``key=value,key2=value2``; anything else is a usage error naming ``--scope``."""
    if raw is None:
        return None
    try:
        return scope_pairs(raw)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--scope'") from error


def scope_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    del ctx, param
    return parse_scope(value)

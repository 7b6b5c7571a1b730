"""What the ``session`` hook commands share: ``--host``."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS


def host_option(function: Any) -> Any:
    return click.option(
        "--host",
        type=click.Choice(HOSTS),
        default=DEFAULT_HOST,
        show_default=True,
        help="The agent host whose hook runs this (its payload and output shapes).",
    )(function)

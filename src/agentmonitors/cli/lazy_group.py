"""Click groups whose commands are imported only when one of them runs.

One command per module, each with its imports at the top (docs/architecture.md,
"Speed"): a group names its commands in a table, ``name -> ("module[:attribute]",
"the line its help shows")``, so ``agentmonitors --help`` and ``<group> --help`` import
no command module, and a command pays for its own imports alone.
``tests/cli/test_lazy_groups.py`` holds each table's line to its command's own help.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

LazyTable = Mapping[str, tuple[str, str]]


class LazyGroup(click.Group):
    """A group whose ``lazy`` commands are imported on first use.

    ``module`` alone means its ``command`` attribute. With ``shorten`` (the default) a
    table line is cut as click cuts a loaded command's help; the top-level group prints
    its lines whole.
    """

    def __init__(
        self, *args: Any, lazy: LazyTable | None = None, shorten: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: LazyTable = lazy or {}
        self.shorten = shorten

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        loaded = self.commands.get(cmd_name)
        if loaded is not None or cmd_name not in self.lazy:
            return loaded
        module, _, attribute = self.lazy[cmd_name][0].partition(":")
        command = getattr(importlib.import_module(module), attribute or "command")
        assert isinstance(command, click.Command)
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their lines, none imported (click's layout)."""
        shown = [
            (name, click.Command(name, help=self.lazy[name][1]))
            if name in self.lazy
            else (name, self.commands[name])
            for name in self.list_commands(ctx)
        ]
        shown = [(name, command) for name, command in shown if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        rows = [
            (name, command.get_short_help_str(limit) if self.shorten else command.help or "")
            for name, command in shown
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

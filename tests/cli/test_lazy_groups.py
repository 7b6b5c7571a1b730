"""Each lazily loaded group prints the help a loaded one would (cli/lazy_group.py)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest

from agentmonitors.cli.app import cli
from agentmonitors.cli.lazy_group import LazyGroup


def lazy_groups(group: click.Group = cli) -> Iterator[LazyGroup]:
    ctx = click.Context(group)
    if isinstance(group, LazyGroup):
        yield group
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if isinstance(sub, click.Group):
            yield from lazy_groups(sub)


GROUPS = {group.name: group for group in lazy_groups() if group.shorten}


def test_the_groups_that_load_their_commands_lazily_are_found() -> None:
    assert {"daemon"} <= set(GROUPS)


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_a_lazy_groups_help_is_what_click_prints_for_its_loaded_commands(name: str) -> None:
    group = GROUPS[name]
    loaded = click.Group(group.name)
    for sub in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), sub)
        assert command is not None and command.name == sub
        assert not command.hidden
        loaded.add_command(command)
    for width in (60, 80, 120):
        lazy_help = click.HelpFormatter(width=width)
        group.format_commands(click.Context(group), lazy_help)
        loaded_help = click.HelpFormatter(width=width)
        loaded.format_commands(click.Context(loaded), loaded_help)
        assert lazy_help.getvalue() == loaded_help.getvalue()

"""The click-free parser of the agent's commands agrees with their click declarations."""

from __future__ import annotations

import click
import pytest

from agentmonitors.cli.agent_commands import COUNT, FLAG, MULTI, QUICK_OPTIONS, quick_parse
from agentmonitors.cli.app import cli


def click_command(group: str, name: str) -> click.Command:
    ctx = click.Context(cli)
    parent = cli.get_command(ctx, group)
    assert isinstance(parent, click.Group)
    command = parent.get_command(ctx, name)
    assert command is not None
    return command


def declared(command: click.Command) -> dict[str, tuple[str, str, tuple[str, ...] | None]]:
    """What the quick table must say for each long option of ``command``."""
    table = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name == "help":
            continue
        (long,) = [opt for opt in param.opts if opt.startswith("--")]
        if param.is_flag:
            kind = FLAG
        elif param.multiple:
            kind = MULTI
        elif isinstance(param.type, click.types.IntRange):
            kind = COUNT
        else:
            kind = "value"
        choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else None
        assert param.name is not None
        table[long] = (param.name, kind, choices)
    return table


@pytest.mark.parametrize("command", sorted(QUICK_OPTIONS))
def test_quick_options_match_the_click_declarations(command: tuple[str, str]) -> None:
    assert QUICK_OPTIONS[command] == declared(click_command(*command))


def test_quick_parse_takes_plain_invocations_and_leaves_the_rest_to_click() -> None:
    events_list = ("events", "list")
    assert quick_parse(
        events_list,
        ["--session=s1", "--tag", "a", "--tag", "b", "--limit", "3", "--unread", "--format=json"],
    ) == {
        "session_id": "s1",
        "tags": ["a", "b"],
        "limit": 3,
        "unread": True,
        "output_format": "json",
    }
    assert quick_parse(("events", "ack"), ["--session", "s"]) == {
        "session_id": "s",
        "output_format": "text",
    }
    assert quick_parse(("session", "list"), []) == {"output_format": "text"}
    for args in (
        [],  # --session is required: click says so
        ["--session", "s", "--help"],
        ["--session", "s", "-h"],
        ["--session"],
        ["--session", "--unread"],
        ["--session", "s", "--limit", "0"],
        ["--session", "s", "--limit", "x"],
        ["--session", "s", "--urgency", "urgent"],
        ["--session", "s", "--unread=yes"],
        ["--session", "s", "stray"],
        ["--session", "s", "--"],
    ):
        assert quick_parse(events_list, args) is None, args

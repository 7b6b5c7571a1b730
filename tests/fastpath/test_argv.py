"""The click-free argument readers of the fast commands agree with their click declarations.

Every command the entry point runs before click (``cli/main.py``: the hooks, the agent's
commands, ``daemon once``) has a table in ``fastpath/argv.py``'s form; each table must say
what the click declaration says, and every spelling click accepts must read to click's
values or (for the agent's commands and ``daemon once``) be left to click.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import click
import pytest

from agentmonitors.cli import main, quick_commands, tick_once
from agentmonitors.cli.app import cli
from agentmonitors.cli.quick_commands import QUICK_OPTIONS, quick_options, quick_parse
from agentmonitors.fastpath.argv import COUNT, FLAG, MULTI, Spec, parse_strict
from agentmonitors.transports import deliver, rewake, session_hooks
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS


def root_context() -> click.Context:
    """A context as the entry point makes it: click caches a command's help option on
    first use, so one made without the root's settings would lose ``-h`` for later tests."""
    return click.Context(cli, info_name="agentmonitors", **cli.context_settings)


def click_command(group: str, name: str) -> click.Command:
    ctx = root_context()
    parent = cli.get_command(ctx, group)
    assert isinstance(parent, click.Group)
    command = parent.get_command(ctx, name)
    assert command is not None
    return command


def declared(command: click.Command) -> Spec:
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


# Every fast command: its table, and how the fast path reads an argument list (None: left
# to click; a string: the hook's usage error).
Reader = Callable[[list[str]], "dict[str, Any] | str | None"]
_HOST_TABLE: Spec = {"--host": ("host", "value", HOSTS)}


def _deliver(args: list[str]) -> dict[str, Any] | str:
    parsed = deliver.parse_deliver_args(args)
    if isinstance(parsed, str):
        return parsed
    return {name: getattr(parsed, name) for name in deliver.DeliverOptions.__slots__}


def _session_hook(command: str) -> Reader:
    def read(args: list[str]) -> dict[str, Any] | str:
        adapter = session_hooks.parse_host_args(command, args)
        if isinstance(adapter, str):
            return adapter
        # The adapter is the host's; the table below says which option filled it.
        host = parse_strict(_HOST_TABLE, args, defaults={"host": DEFAULT_HOST})
        assert isinstance(host, dict)
        return host

    return read


def _agent(command: tuple[str, str]) -> Reader:
    return lambda args: quick_options(command, args)


FAST: dict[tuple[str, str], tuple[Spec, Reader, bool]] = {
    **{command: (table, _agent(command), False) for command, table in QUICK_OPTIONS.items()},
    ("daemon", "once"): (tick_once.QUICK_OPTIONS, tick_once.quick_parse, False),
    ("hook", "deliver"): (deliver.DELIVER_OPTIONS, _deliver, True),
    ("hook", "rewake"): (
        rewake.REWAKE_OPTIONS,
        lambda args: parse_strict(rewake.REWAKE_OPTIONS, args),
        True,
    ),
    ("session", "start"): (_HOST_TABLE, _session_hook("session start"), True),
    ("session", "end"): (_HOST_TABLE, _session_hook("session end"), True),
}


def test_every_command_the_entry_point_runs_before_click_is_checked() -> None:
    dispatched = set(main._FAST) | set(main._AGENT) | {("daemon", "once")}
    assert set(FAST) == dispatched
    assert set(quick_commands.QUICK_OPTIONS) == set(main._AGENT)


def _same_choices(table: Spec) -> dict[str, tuple[str, str, frozenset[str] | None]]:
    # A hook's usage error lists the choices in the order it always has.
    return {
        option: (dest, kind, None if choices is None else frozenset(choices))
        for option, (dest, kind, choices) in table.items()
    }


@pytest.mark.parametrize("command", sorted(FAST))
def test_each_fast_table_is_the_click_declaration(command: tuple[str, str]) -> None:
    table, _read, strict = FAST[command]
    clicked = click_command(*command)
    if strict:
        assert _same_choices(table) == _same_choices(declared(clicked))
    else:
        assert table == declared(clicked)
    arguments = [param.name for param in clicked.params if isinstance(param, click.Argument)]
    assert arguments == ([tick_once.QUICK_ARGUMENT] if command == ("daemon", "once") else [])


def _sample(param: click.Option) -> list[str]:
    if isinstance(param.type, click.Choice):
        return [str(choice) for choice in param.type.choices]
    if isinstance(param.type, click.types.IntRange):
        return ["3"]
    return ["value", "-dash"]


def spellings(command: click.Command) -> Iterator[list[str]]:
    """Each option of ``command`` in every spelling click takes, and in some it refuses."""
    for param in command.params:
        if isinstance(param, click.Argument):
            yield ["folder"]
            yield ["folder", "other"]
            continue
        if not isinstance(param, click.Option) or param.name == "help":
            continue
        for opt in [*param.opts, *param.secondary_opts]:
            if param.is_flag:
                yield [opt]
                yield [opt, opt]
                yield [f"{opt}=yes"]
                continue
            yield [opt]
            for value in [*_sample(param), "not-a-choice", "0"]:
                yield [opt, value]
                yield [f"{opt}={value}"]
                yield [opt, value, opt, value]
    yield ["--no-such-option"]
    yield ["--"]


def click_reads(command: click.Command, args: list[str]) -> dict[str, Any] | None:
    try:
        with command.make_context(command.name, list(args), parent=root_context()) as ctx:
            params = dict(ctx.params)
    except click.UsageError:
        return None
    return {
        key: list(value) if isinstance(value, tuple) else value for key, value in params.items()
    }


@pytest.mark.parametrize("command", sorted(FAST))
def test_every_spelling_reads_as_click_reads_it_or_goes_to_click(command: tuple[str, str]) -> None:
    _table, read, strict = FAST[command]
    clicked = click_command(*command)
    required = ["--session", "s1"] if command in (("events", "list"), ("events", "ack")) else []
    checked = 0
    for spelling in spellings(clicked):
        args = [*required, *spelling]
        expected = click_reads(clicked, args)
        got = read(args)
        if strict and spelling == ["--"]:
            # click takes a bare end-of-options marker; a hook has always refused it.
            assert isinstance(got, str), args
            continue
        if expected is None:
            # click refuses it: the fast path refuses it too (or leaves it to click).
            assert got is None or isinstance(got, str), args
            continue
        if got is None:
            assert not strict, args  # a hook never hands over to click
            continue
        assert not isinstance(got, str), (args, got)
        assert {key: expected[key] for key in got} == got, args
        checked += 1
    assert checked > 0

"""The shared delivery words and daemon defaults have one definition each."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import click
import pytest

import agentmonitors
from agentmonitors.cli.channel import command as channel_command
from agentmonitors.cli.daemon import command as daemon_command
from agentmonitors.cli.hook import command as hook_command
from agentmonitors.daemon.app import DaemonOptions
from agentmonitors.delivery.heartbeats import CHANNEL_POLL_MS
from agentmonitors.delivery.records import Lifecycle
from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.transports.channel_options import ChannelOptions
from agentmonitors.transports.deliver import parse_deliver_args
from agentmonitors.workspace import DEFAULT_POLL_MS, DEFAULT_REAP_AFTER_MS

SOURCE = Path(agentmonitors.__file__).parent


@pytest.mark.parametrize(
    "name",
    ["LIFECYCLES", "REMINDER", "DEFAULT_REAP_AFTER_MS", "DEFAULT_POLL_MS", "CHANNEL_POLL_MS"],
)
def test_each_shared_constant_is_assigned_in_one_module(name: str) -> None:
    pattern = re.compile(rf"^{name}\b[^=\n]*=", re.MULTILINE)
    defined = sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert len(defined) == 1, defined


def test_the_lifecycle_type_and_every_lifecycle_flag_agree() -> None:
    assert get_args(Lifecycle) == LIFECYCLES
    for name in ("deliver", "claim"):
        option = next(p for p in _command(hook_command, name).params if p.name == "lifecycle")
        assert isinstance(option.type, click.Choice)
        assert tuple(option.type.choices) == LIFECYCLES
    for lifecycle in LIFECYCLES:
        assert not isinstance(parse_deliver_args(["--lifecycle", lifecycle]), str)
    assert isinstance(parse_deliver_args(["--lifecycle", "turn-late"]), str)


def _command(group: click.Group, name: str) -> click.Command:
    command = group.get_command(click.Context(group), name)
    assert command is not None
    return command


def _default(group: click.Group, command: str, option: str) -> object:
    return next(p for p in _command(group, command).params if p.name == option).default


def test_daemon_and_channel_defaults_come_from_one_place() -> None:
    options = DaemonOptions(workspace="w", monitors_dir=None, socket_path="s", db_path="d")
    assert (options.poll_ms, options.reap_after_ms) == (DEFAULT_POLL_MS, DEFAULT_REAP_AFTER_MS)
    assert _default(daemon_command, "run", "poll_ms") == DEFAULT_POLL_MS
    assert _default(daemon_command, "run", "reap_after_ms") == DEFAULT_REAP_AFTER_MS
    assert _default(channel_command, "serve", "poll_ms") == CHANNEL_POLL_MS
    channel = ChannelOptions(workspace="w", enabled=True, socket_path="s", host_session_id=None)
    assert channel.poll_ms == CHANNEL_POLL_MS

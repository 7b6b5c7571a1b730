"""Every ``agentmonitors ...`` command the hook and channel messages name really exists.

The hook path's messages (the no-daemon line, the SessionStart advisory, the
no-socket warnings, the enable file's note, the hold explanations, the channel's
instructions) are what a user or the model acts on next; a command that does not parse
there is a dead end.
"""

from __future__ import annotations

import re
import shlex

import click
import pytest

from agentmonitors.cli.app import cli
from agentmonitors.daemon.protocol import NO_DAEMON_MESSAGE
from agentmonitors.transports.channel import ACK_DESCRIPTION, INSTRUCTIONS
from agentmonitors.transports.deliver import (
    BOOT_FAILED_WARNING,
    NO_SESSION_WARNING,
    NO_SOCKET_WARNING,
)
from agentmonitors.transports.session_hooks import disabled_advisory
from agentmonitors.workspace import ENABLE_FILE_NOTE

MESSAGES = {
    "no daemon": NO_DAEMON_MESSAGE,
    "disabled advisory": disabled_advisory(2),
    "W1": NO_SESSION_WARNING,
    "W3a": NO_SOCKET_WARNING,
    "W3b": BOOT_FAILED_WARNING,
    "enable file note": ENABLE_FILE_NOTE,
    "channel instructions": INSTRUCTIONS + ACK_DESCRIPTION,
}
COMMAND = re.compile(r"`(agentmonitors [^`]+)`")


def named_commands(text: str) -> list[str]:
    return COMMAND.findall(text)


def resolve(command_line: str) -> tuple[click.Command, list[str]]:
    """The click command a command line names, and the options it uses."""
    words = shlex.split(command_line)[1:]
    command: click.Command = cli
    flags: list[str] = []
    for word in words:
        if word.startswith("-"):
            flags.append(word.split("=", 1)[0])
        elif isinstance(command, click.Group) and not flags:
            found = command.get_command(click.Context(command), word)
            assert found is not None, f"{command_line!r}: no command {word!r}"
            command = found
    assert not isinstance(command, click.Group), f"{command_line!r} names only a group"
    return command, flags


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_each_named_command_parses(name: str) -> None:
    for command_line in named_commands(MESSAGES[name]):
        command, flags = resolve(command_line)
        known = {opt for param in command.params for opt in param.opts}
        assert set(flags) <= known, f"{name}: {command_line!r} uses unknown {set(flags) - known}"


def test_the_messages_name_the_commands_that_fix_their_problem() -> None:
    assert named_commands(NO_DAEMON_MESSAGE) == [
        "agentmonitors daemon start",
        "agentmonitors daemon status",
    ]
    assert "agentmonitors init --enable-only" in named_commands(disabled_advisory(1))
    assert "agentmonitors init --enable-only" in named_commands(ENABLE_FILE_NOTE)


def test_the_checker_catches_a_command_that_does_not_exist() -> None:
    with pytest.raises(AssertionError):
        resolve("agentmonitors doctr")
    command, flags = resolve("agentmonitors init --enable-only")
    assert command.name == "init" and flags == ["--enable-only"]

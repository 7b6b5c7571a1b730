"""CLI-wide conventions: every option explains itself, every failure says ``error:``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest

from agentmonitors.cli.app import cli
from agentmonitors.cli.quick_commands import sessions_table
from agentmonitors.transports.deliver import DeliverOptions, parse_deliver_args
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def walk(
    command: click.Command, path: str, ctx: click.Context
) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name} is listed but does not load"
            yield from walk(sub, f"{path} {name}", click.Context(sub, parent=ctx, info_name=name))


def every_command() -> list[tuple[str, click.Command]]:
    return list(walk(cli, "agentmonitors", click.Context(cli, info_name="agentmonitors")))


def test_every_command_and_option_has_help() -> None:
    missing = [
        f"{path} {'/'.join(param.opts)}"
        for path, command in every_command()
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    missing += [
        f"{path} (the command itself)"
        for path, command in every_command()
        if not (command.help or command.short_help or "").strip()
    ]
    assert missing == []


def test_the_walk_reaches_the_whole_tree() -> None:
    paths = {path for path, _ in every_command()}
    # A walk that stopped at the lazy group would pass the test above vacuously.
    assert {
        "agentmonitors hook deliver",
        "agentmonitors session start",
        "agentmonitors session end",
        "agentmonitors monitor explain",
        "agentmonitors source install",
        "agentmonitors events list",
    } <= paths
    assert len(paths) > 30


def _options(path: str) -> dict[str, click.Option]:
    command = dict(every_command())[path]
    return {
        opt: param
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
        if opt not in ("-h", "--help")
    }


def test_hook_deliver_help_describes_the_flags_the_fast_path_parses(run_cli: Run) -> None:
    # ``hook deliver`` is parsed by hand before click loads; its --help is click's.
    shown = run_cli("hook", "deliver", "--help")
    assert shown.code == 0
    assert shown.out.startswith("Usage: agentmonitors hook deliver [OPTIONS]")
    options = _options("agentmonitors hook deliver")
    assert set(options) == {"--host", "--lifecycle", "--format", "--socket", "--debug"}
    for name, option in options.items():
        assert name in shown.out
        assert option.help is not None and option.help.split()[0] in shown.out
        if option.is_flag:
            args = [name]
        elif isinstance(option.type, click.Choice):
            args = [name, str(option.type.choices[0])]
        else:
            args = [name, "value"]
        assert isinstance(parse_deliver_args(args), DeliverOptions), name


@pytest.mark.parametrize("hook", ["start", "end"])
def test_session_hook_help_goes_to_click(run_cli: Run, hook: str) -> None:
    shown = run_cli("session", hook, "-h")
    assert shown.code == 0
    assert shown.out.startswith(f"Usage: agentmonitors session {hook} [OPTIONS]")
    assert "hook" in shown.out


def test_session_list_table_has_headers() -> None:
    records = [
        {
            "id": "01JSESSIONAAAAAAAAAAAAAAAA",
            "status": "active",
            "adapter": "cursor",
            "agentIdentity": "host-a",
            "lastActiveAt": "2026-03-04T05:06:07.000Z",
            "workspacePath": "/p",
        },
        {
            "id": "01JSESSIONBBBBBBBBBBBBBBBB",
            "status": "dormant",
            "agentIdentity": "a-much-longer-identity",
            "lastActiveAt": "2026-03-04T05:00:00.000Z",
        },
    ]
    lines = sessions_table(records).splitlines()
    assert lines[0].split() == ["ID", "Status", "Host", "Identity", "Last", "active", "Workspace"]
    assert lines[1].split() == [
        "01JSESSIONAAAAAAAAAAAAAAAA",
        "active",
        "cursor",
        "host-a",
        "2026-03-04T05:06:07.000Z",
        "/p",
    ]
    assert lines[2].endswith("(global)")
    assert lines[2].split()[2] == "claude-code"  # a record without one is Claude Code's
    # Columns line up under their headers.
    column = lines[0].index("Workspace")
    assert lines[1][column:] == "/p" and lines[2][column:] == "(global)"
    assert all(line == line.rstrip() for line in lines)


# --------------------------------------------------------------------------- errors

EXE = Path(sys.executable).parent / "agentmonitors"

FAILURES = [
    pytest.param(["nope"], id="unknown-command"),
    pytest.param(["scan", "--bogus"], id="unknown-option"),
    pytest.param(["scan", "missing-dir"], id="scan-missing-path"),
    pytest.param(["validate", "missing-dir"], id="validate-missing-path"),
    pytest.param(["monitor", "test", "missing.md"], id="monitor-test-missing-file"),
    pytest.param(["session", "list"], id="session-list-no-daemon"),
    pytest.param(["session", "close", "01JNOPE"], id="session-close-no-daemon"),
    pytest.param(["events", "list", "--session", "01JNOPE"], id="events-list-no-daemon"),
    pytest.param(["events", "ack", "--session", "01JNOPE"], id="events-ack-no-daemon"),
    pytest.param(
        ["hook", "claim", "--session", "01JNOPE", "--lifecycle", "turn-idle"],
        id="hook-claim-no-daemon",
    ),
    pytest.param(["daemon", "stop"], id="daemon-stop-no-daemon"),
    pytest.param(["source", "remove", "file-fingerprint"], id="source-remove-bundled"),
    pytest.param(["source", "update", "no-such-source"], id="source-update-unknown"),
    pytest.param(["init", "../bad name"], id="init-bad-name"),
    pytest.param(["init", "--enable-only", "docs"], id="init-enable-only-with-name"),
]


USAGE_ERRORS = {"unknown-command", "unknown-option", "init-enable-only-with-name"}


@pytest.mark.slow
@pytest.mark.parametrize("args", FAILURES)
def test_failures_start_with_one_form_of_error(
    isolated_environment: Path, args: list[str], request: pytest.FixtureRequest
) -> None:
    done = subprocess.run(
        [str(EXE), *args],
        env={**os.environ},
        cwd=isolated_environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    usage = request.node.callspec.id in USAGE_ERRORS
    assert done.returncode == (2 if usage else 1), done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: "), done.stderr


@pytest.mark.slow
def test_monitor_already_exists_is_an_error(isolated_environment: Path) -> None:
    def init() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EXE), "init", "docs"],
            cwd=isolated_environment,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert init().returncode == 0
    again = init()
    assert again.returncode == 1
    assert again.stderr.startswith("error: Monitor already exists: ")

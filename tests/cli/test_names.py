"""One word per idea in what every command shows: help, metavars, formats, JSON fields."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

from agentmonitors.cli.app import COMMANDS, cli
from tests.cli.test_help_and_errors import every_command
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def test_the_top_help_names_every_subcommand_of_each_group() -> None:
    ctx = click.Context(cli, info_name="agentmonitors")
    missing = []
    for name, (_module, summary) in COMMANDS.items():
        group = cli.get_command(ctx, name)
        if isinstance(group, click.Group):
            sub_ctx = click.Context(group, parent=ctx, info_name=name)
            missing += [
                f"{name} {sub}" for sub in group.list_commands(sub_ctx) if sub not in summary
            ]
    assert missing == []


def test_a_monitors_folder_is_called_dir_everywhere_and_explained() -> None:
    problems = []
    for path, command in every_command():
        # The root's settings, as a real run has them: click keeps the help option a
        # command first builds, and a bare context would leave it without -h.
        context = click.Context(command, info_name=path, **(cli.context_settings or {}))
        usage = command.collect_usage_pieces(context)
        for piece in usage:
            if any(word in piece for word in ("DIRECTORY", "MONITORS_DIR")):
                problems.append(f"{path}: {piece}")
        for param in command.params:
            shown = isinstance(param, click.Option) and not param.hidden
            if shown and "--dir" in param.opts and param.metavar != "DIR":
                problems.append(f"{path} --dir shows {param.metavar or 'TEXT'}")
            folder = isinstance(param, click.Argument) and param.name in (
                "monitors_dir",
                "directory",
            )
            if folder and "DIR" not in (command.help or ""):
                problems.append(f"{path}: its DIR argument is not explained")
    assert problems == []


def test_verify_says_when_its_monitor_id_may_be_left_out(run_cli: Run) -> None:
    shown = run_cli("verify", "--help").out
    assert "MONITOR_ID names the monitor" in " ".join(shown.split())


# The outputs that are a stream of lines or a host's wire format, where TOON (several
# lines per value) has no place (docs/cli.md, "Formats").
LINE_OR_WIRE = {"agentmonitors events follow", "agentmonitors hook deliver"}


def format_choices() -> dict[str, tuple[str, ...]]:
    choices = {}
    for path, command in every_command():
        for param in command.params:
            if (
                isinstance(param, click.Option)
                and "--format" in param.opts
                and isinstance(param.type, click.Choice)
            ):
                choices[path] = tuple(param.type.choices)
    return choices


def test_every_format_choice_is_text_json_toon_in_that_order() -> None:
    choices = format_choices()
    assert len(choices) > 30, choices
    odd = {
        path: shown
        for path, shown in choices.items()
        if shown[:3] != ("text", "json", "toon") and path not in LINE_OR_WIRE
    }
    assert odd == {}
    assert {choices[path] for path in LINE_OR_WIRE} == {("text", "json")}
    # One extra choice at most, after the three: `session open --format id`.
    assert {shown[3:] for shown in choices.values()} == {(), ("id",)}


def test_every_format_says_what_each_choice_is_for(run_cli: Run) -> None:
    for path in format_choices():
        words = path.split()[1:]
        shown = " ".join(run_cli(*words, "--help").out.split())
        assert "text for" in shown and "json for" in shown, path
        if path not in LINE_OR_WIRE:
            assert "toon (the JSON's data, compact) for agents" in shown, path


def test_toon_is_the_same_value_as_the_json(run_cli: Run) -> None:
    import toon_format

    folder = Path(".claude/monitors/notes")
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: file-fingerprint\n  globs: ['notes/*.md']\n---\nRead it.\n"
    )
    for words in (("validate",), ("source", "list"), ("scan", ".claude/monitors"), ("doctor",)):
        as_json = run_cli(*words, "--format", "json")
        as_toon = run_cli(*words, "--format", "toon")
        assert as_toon.code == as_json.code, (words, as_toon.err)
        value, decoded = json.loads(as_json.out), toon_format.decode(as_toon.out)
        if words == ("doctor",):  # its report carries the time of each run: compare the checks
            value, decoded = (
                [(check["name"], check["status"]) for check in run["checks"]]
                for run in (value, decoded)
            )
        assert decoded == value, words


def test_validate_names_the_id_of_an_invalid_monitor_as_id(run_cli: Run) -> None:
    folder = Path(".claude/monitors/bad")
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text("---\nwatch:\n  type: nope\n---\nx\n")
    result = run_cli("validate", "--format", "json")
    [error] = json.loads(result.out)["errors"]
    # filePath held the id all along (kept for compatibility); id says what it is.
    assert error["id"] == error["filePath"] == "bad"


OMITTED = ("default", "without", "with no", "left out", "omit")


def test_every_optional_argument_says_what_leaving_it_out_does() -> None:
    """An ``[ARG]`` in a usage line is explained in its command's help: by its name, with
    what the command does when it is left out."""
    problems = []
    for path, command in every_command():
        text = " ".join((command.help or "").split())
        for param in command.params:
            if not isinstance(param, click.Argument) or param.required:
                continue
            # The usage line's name, read without a context (one made here would cache a
            # help option without -h on the command).
            name = (param.metavar or (param.name or "").upper()).strip("[].")
            named = name in text or name.rstrip("S") in text
            lowered = text.lower()
            if not named or not any(word in lowered for word in OMITTED):
                problems.append(f"{path} [{name}]: {text!r}")
    assert problems == []


def test_approve_without_ids_all_or_list_is_a_usage_error(run_cli: Run) -> None:
    result = run_cli("monitor", "approve")
    assert (result.code, result.out) == (2, "")
    assert "monitor ids, --all or --list" in result.err

"""Output conventions every command shares: formats, JSON, TOON, errors.

Data goes to stdout, messages to stderr. ``--format`` wins; where a command defaults
to "auto", an agent's environment gets TOON and a person gets text. Detection reads
environment variables only, never whether stdout is a terminal.

Nothing here imports click or typing: the commands an agent runs most (``events list``,
``events ack``, ``session list``) print through this module without either.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence

from agentmonitors.agent_env import running_under_agent
from agentmonitors.formats import (
    clean_output,
    dump_json,
    dump_toon,
    format_timestamp,
    to_jsonable,
)
from agentmonitors.untrusted import clean_line

# The formatting helpers are re-exported: every command prints through this module.
__all__ = [
    "ERROR_PREFIX",
    "clean_output",
    "display_path",
    "dump_json",
    "dump_toon",
    "echo",
    "emit",
    "format_option",
    "format_timestamp",
    "notice",
    "print_document",
    "print_error",
    "report_error",
    "resolve_format",
    "running_under_agent",
    "text_table",
    "to_jsonable",
    "warn",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypeVar

    OutputFormat = Literal["toon", "json", "text"]
    F = TypeVar("F", bound=Callable[..., Any])


def echo(text: str, *, err: bool = False) -> None:
    """One line to stdout (or stderr), flushed, as ``click.echo`` prints it.

    A stream that cannot encode the text (an ASCII locale) gets UTF-8 bytes instead of
    a crash, with undecodable characters replaced.
    """
    stream = sys.stderr if err else sys.stdout
    line = text + "\n"
    try:
        stream.write(line)
    except UnicodeEncodeError:
        stream.flush()
        stream.buffer.write(line.encode("utf-8", errors="replace"))
    stream.flush()


def resolve_format(explicit: str | None, env: Mapping[str, str] | None = None) -> OutputFormat:
    if explicit in {"toon", "json", "text"}:
        return explicit  # type: ignore[return-value]
    return "toon" if running_under_agent(env) else "text"


def print_document(value: Any, fmt: str) -> bool:
    """Print ``value`` as the JSON or TOON document ``fmt`` asks for; False under text.

    TOON is the same value as the JSON, so every command that prints JSON offers it.
    """
    if fmt == "json":
        echo(dump_json(value))
        return True
    if fmt == "toon":
        echo(dump_toon(value))
        return True
    return False


def emit(value: Any, fmt: OutputFormat, text: Callable[[], str]) -> None:
    """Print ``value`` as JSON or TOON, or the text rendering for people."""
    if fmt == "json":
        echo(dump_json(value))
    elif fmt == "toon":
        echo(dump_toon(value))
    else:
        rendered = text()
        if rendered:
            echo(clean_output(rendered))


# Every failure a command reports on stderr starts with this, click's usage errors
# included, so a script (or a person scanning a log) has one form to look for.
ERROR_PREFIX = "error: "


# The exit codes of every command (docs/cli.md): 0 success, 1 failure, 2 usage error.
FAILURE = 1
USAGE = 2


def print_error(message: str) -> int:
    """``error: <message>`` on stderr, on one line; returns 1, the exit code of every failure."""
    one_line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    echo(clean_output(ERROR_PREFIX + one_line), err=True)
    return FAILURE


def report_error(message: str, as_json: bool) -> int:
    """``error: …`` on stderr, and under JSON also ``{"error": …}`` on stdout; returns 1.

    The JSON object stays for the scripts that read it (docs/cli.md); the stderr line
    is there under every format, so one look at stderr tells any failure.
    """
    if as_json:
        echo(dump_json({"error": message}))
    return print_error(message)


def notice(message: str) -> None:
    """A note about the answer (``No daemon running …``): stderr, never in the data."""
    echo(clean_output(message), err=True)


def warn(message: str) -> None:
    echo(clean_output(f"Warning: {message}"), err=True)


# One order wherever the choices are shown; a command's extra choice (``session open``'s
# ``id``) comes after them (docs/cli.md, "Formats").
FORMAT_ORDER = ("text", "json", "toon")


def format_option(choices: tuple[str, ...], default: OutputFormat | None) -> Callable[[F], F]:
    """``--format``; a None default means auto (TOON for agents, text for people)."""
    ordered = [name for name in FORMAT_ORDER if name in choices]
    ordered += [name for name in choices if name not in FORMAT_ORDER]
    meaning = {
        "text": "text for people",
        "json": "json for scripts",
        "toon": "toon (the JSON's data, compact) for agents",
    }
    said = ", ".join(meaning[name] for name in ordered if name in meaning)
    default_said = "toon under an agent, text otherwise" if default is None else default
    help_text = f"Output format: {said}. Default: {default_said}."
    # Lazy: the agent's quick commands print through this module without click.
    import click

    return click.option(
        "--format",
        "output_format",
        type=click.Choice(ordered),
        default=default,
        help=help_text,
    )


def text_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Rows under a header line, each column as wide as its widest cell.

    The last column is not padded, so lines carry no trailing spaces.
    """
    # A cell is one line: a break in an untrusted title must not start a row of its own.
    table = [list(headers), *([clean_line(str(cell)) for cell in row] for row in rows)]
    widths = [max(len(line[column]) for line in table) for column in range(len(headers))]
    return "\n".join(
        "  ".join(
            cell if column == len(line) - 1 else cell.ljust(widths[column])
            for column, cell in enumerate(line)
        ).rstrip()
        for line in table
    )


def display_path(path: str, base: str | None = None) -> str:
    """``path`` relative to ``base`` (default: the current directory) when inside it."""
    start = base if base is not None else os.getcwd()
    try:
        relative = os.path.relpath(path, start)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative

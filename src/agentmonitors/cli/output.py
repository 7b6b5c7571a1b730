"""Output conventions every command shares: formats, JSON, TOON, errors.

Data goes to stdout, messages to stderr. ``--format`` wins; where a command defaults
to "auto", an agent's environment gets TOON and a person gets text. Detection reads
environment variables only, never whether stdout is a terminal.

Nothing here imports click or typing: the commands an agent runs most (``events list``,
``events ack``, ``session list``) print through this module without either.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence

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


# Variables the agent TUIs set for the commands they run.
_AGENT_FLAGS = ("CLAUDECODE", "CURSOR_AGENT", "GEMINI_CLI", "CODEX_SANDBOX", "OPENCODE")
_AGENT_MARKERS = ("CLAUDE_CODE_ENTRYPOINT", "CODEX_THREAD_ID", "OPENCODE_SERVER", "AIDER_MODEL")


def running_under_agent(env: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if env is None else env
    if any(environ.get(name, "") not in {"", "0", "false"} for name in _AGENT_FLAGS):
        return True
    return any(environ.get(name) for name in _AGENT_MARKERS)


def resolve_format(explicit: str | None, env: Mapping[str, str] | None = None) -> OutputFormat:
    if explicit in {"toon", "json", "text"}:
        return explicit  # type: ignore[return-value]
    return "toon" if running_under_agent(env) else "text"


def format_timestamp(moment: _dt.datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` in UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    utc = moment.astimezone(_dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def to_jsonable(value: Any) -> Any:
    """Plain JSON values, with datetimes as ISO-8601 UTC milliseconds."""
    if isinstance(value, _dt.datetime):
        return format_timestamp(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


# C0 controls except TAB and LF, DEL, and C1: what a terminal acts on (colours, cursor
# moves, bells, CSI) and what an agent's context should never receive raw.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_output(text: str) -> str:
    """``text`` with every raw control character shown as its ``\\uXXXX`` escape.

    Event titles, monitor names and session identities come from files and commands
    nobody vetted. In JSON the escape is the same character (json.dumps leaves DEL
    and C1 raw under ``ensure_ascii=False``, and they can only occur inside strings);
    in TOON and text it is a visible stand-in.
    """
    return _CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def dump_json(value: Any, *, compact: bool = False) -> str:
    """Pretty (2-space) JSON, or compact wire JSON; non-ASCII is kept as is."""
    if compact:
        text = json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(to_jsonable(value), ensure_ascii=False, indent=2)
    return clean_output(text)


def dump_toon(value: Any) -> str:
    data = to_jsonable(value)
    encode_document = _bare_toon_encoder()
    if encode_document is not None:
        try:
            return clean_output(str(encode_document(data)))
        except TypeError:
            pass  # a changed private signature; the public encoder below is the contract
    from toon_format import encode

    return clean_output(str(encode(data)))


def _bare_toon_encoder() -> Callable[[Any], str] | None:
    """toon_format's document encoder, loaded without the rest of the package.

    The package's ``__init__`` reads its own version through ``importlib.metadata`` and
    its API module loads the decoder too; together they cost more than the rest of
    ``events list``, which an agent runs after every reminder. When the package is not
    imported yet, its encoder module is loaded under a bare package object that is
    dropped again (a later ``import toon_format`` runs the real initializer and reuses
    the module). None when the package's layout is not the expected one; the output is
    checked against the public ``encode`` by tests/test_imports.py.
    """
    import sys

    if "toon_format" in sys.modules:
        return None
    import importlib.util
    import types

    spec = importlib.util.find_spec("toon_format")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = types.ModuleType("toon_format")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["toon_format"] = package
    try:
        from toon_format import _encoder
    except ImportError:
        return None
    finally:
        if sys.modules.get("toon_format") is package:
            del sys.modules["toon_format"]
    document = getattr(_encoder, "encode", None)
    if not callable(document):
        return None

    def encode_document(data: Any) -> str:
        return str(document(data, indent_size=2, delimiter=",", default=None, sort_keys=False))

    return encode_document


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


def print_error(message: str) -> int:
    """``error: <message>`` on stderr; returns 1, the exit code of every failure."""
    echo(clean_output(ERROR_PREFIX + message), err=True)
    return 1


def report_error(message: str, as_json: bool) -> int:
    """``{"error": …}`` on stdout under JSON, ``error: …`` on stderr otherwise; returns 1."""
    if as_json:
        echo(dump_json({"error": message}))
        return 1
    return print_error(message)


def warn(message: str) -> None:
    echo(clean_output(f"Warning: {message}"), err=True)


def format_option(
    choices: tuple[OutputFormat, ...], default: OutputFormat | None
) -> Callable[[F], F]:
    """``--format``; a None default means auto (TOON for agents, text for people)."""
    help_text = (
        "Output format (default: toon under an agent, text otherwise)."
        if default is None
        else f"Output format (default: {default})."
    )
    import click

    return click.option(
        "--format",
        "output_format",
        type=click.Choice(choices),
        default=default,
        help=help_text,
    )


def text_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Rows under a header line, each column as wide as its widest cell.

    The last column is not padded, so lines carry no trailing spaces.
    """
    table = [list(headers), *([clean_output(str(cell)) for cell in row] for row in rows)]
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

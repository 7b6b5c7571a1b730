"""Every ``agentmonitors <command>`` that a user or the model is told to run exists.

The mentions are collected from what reaches a person or the model: the string literals
of ``src/`` (messages, hook advisories, rendered deliveries, help text, monitor
templates), the README, the plugin's skill, its hooks and its MCP server. Each one is
resolved through the real CLI: the command words through the click application (the
fast-dispatched hook commands included), then every option it names against that
command's options.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from agentmonitors.cli import main as entry
from agentmonitors.cli.app import cli
from agentmonitors.transports.deliver import parse_deliver_args

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "agentmonitors"
PROGRAM = "agentmonitors"
ALTERNATIVE = "\x00"
HELP = {"--help", "-h"}  # added by click to every command at parse time

# Shell words that end one simple command: the next word may start another.
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")"}
KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "exec", "time"}
# What ends a mention in running text (outside backticks and code blocks).
PROSE_END = re.compile(r"[`\"\n()\[\],;]| — | - |\.(?:\s|$)|:(?:\s|$)")
# Running text that introduces a command: "Run agentmonitors …", "with: agentmonitors …".
PROSE_CUE = re.compile(r"(?:^|\n|[:•]|\b(?:run|Run|use|Use|try|Try|then))[ \t]*$")


@dataclass(frozen=True)
class Mention:
    where: str  # file:line
    words: tuple[str, ...]  # what follows the program name

    def __str__(self) -> str:
        return f"{self.where}: `{' '.join((PROGRAM, *self.words))}`"


# ------------------------------------------------------------------------ collecting


def is_placeholder(word: str) -> bool:
    """``<id>``, ``[DIR]``, ``{value}``, ``PKG…``, ``FILE``: stands for what the user types."""
    bare = word.strip("[]'\".…")
    return (
        not bare
        or bare[0] in "<{$"
        or bare.endswith((">", "}"))
        or (bare.isupper() and bare.isalpha())
        or word.endswith(("...", "…"))
    )


def shell_words(code: str) -> list[str]:
    # `a|b|c` without spaces lists alternatives (`--urgency high|normal|low`), not a pipe.
    code = re.sub(r"(?<=\S)\|(?=\S)", ALTERNATIVE, code)
    code = re.sub(r"\$\([^()]*\)", "$VALUE", code)  # `test-$(date +%s)`: one value
    lexer = shlex.shlex(code, posix=True, punctuation_chars="|&;()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # an unbalanced quote (a message with a value cut out): plain words
        words = code.split()
    return [word.replace(ALTERNATIVE, "|") for word in words]


def in_code(code: str, where: str) -> Iterator[Mention]:
    """Invocations in shell code: the program as a command's first word (after any
    ``NAME=value``), never as an argument (``command -v agentmonitors``)."""
    for line in code.replace("\\\n", " ").splitlines():
        yield from in_command_line(line, where)


def in_command_line(line: str, where: str) -> Iterator[Mention]:
    words = shell_words(line)
    starts_command = True
    for index, word in enumerate(words):
        if word in SEPARATORS or (starts_command and word in KEYWORDS):
            starts_command = True
            continue
        if " " in word:  # a quoted argument holds text of its own
            yield from in_text(word, where)
        if starts_command and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word):
            continue
        if starts_command and (word == PROGRAM or word.endswith("/" + PROGRAM)):
            tail: list[str] = []
            for arg in words[index + 1 :]:
                if arg in SEPARATORS:
                    break
                tail.append(arg)
            yield Mention(where, tuple(tail))
        starts_command = False


def in_text(text: str, where: str, *, prose: bool = True) -> Iterator[Mention]:
    """Mentions in running text: backtick spans are code. Elsewhere (unless ``prose`` is
    off, as for Markdown, which puts every command in code) the program name counts when
    a command follows it or a cue ("run", a colon, a line start) precedes it, so
    "agentmonitors itself" is prose and "run agentmonitors doctor" is a command."""
    spans = list(re.finditer(r"`([^`]+)`", text))
    for span in spans:
        yield from in_code(span.group(1), where)
    if not prose:
        return
    rest = re.sub(r"`[^`]+`", lambda m: " " * len(m.group(0)), text)
    # Not before ``:x``: ``agentmonitors:silence`` is a name (an object key), not a command.
    for found in re.finditer(rf"(?<![\w/.-]){PROGRAM}(?![\w-]|\.\w|:\S)", rest):
        after = rest[found.end() :]
        end = PROSE_END.search(after)
        # Quoted as a shell would read it: a message quotes a path (`--socket '/a b'`).
        words = tuple(shell_words(after[: end.start() if end else len(after)]))
        known = bool(words) and words[0] in cli.list_commands(click.Context(cli))
        if known or PROSE_CUE.search(rest[: found.start()]):
            yield Mention(where, words)


def in_markdown(path: Path) -> Iterator[Mention]:
    text = path.read_text(encoding="utf-8")
    fence = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
    blocks = [(m.start(1), m.group(1)) for m in fence.finditer(text)]
    for start, block in blocks:
        number = text.count("\n", 0, start) + 1
        lines = re.split(r"(?<!\\)\n", block)  # a `\` continuation stays in its command
        # A session transcript: `$ ` lines are what was typed, the rest is output.
        typed_only = any(line.startswith("$ ") for line in lines)
        for line in lines:
            if not typed_only or line.startswith("$ "):
                yield from in_code(line, f"{path.relative_to(ROOT)}:{number}")
            number += line.count("\n") + 1
    rest = fence.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for number, paragraph in paragraphs(rest):
        yield from in_text(paragraph, f"{path.relative_to(ROOT)}:{number}", prose=False)


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """Blank-line separated paragraphs with the number (1-based) of their first line."""
    lines: list[str] = []
    first = 1
    for number, line in enumerate([*text.split("\n"), ""], start=1):
        if line.strip():
            if not lines:
                first = number
            lines.append(line)
        elif lines:
            yield first, "\n".join(lines)
            lines = []


def python_strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal a user can see: f-strings with ``<value>`` for each field;
    docstrings only where click shows them (a decorated command's)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            hidden.update(id(value) for value in node.values)
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and not (isinstance(node, ast.FunctionDef) and node.decorator_list)
        ):
            hidden.add(id(body[0].value))
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            yield (
                node.lineno,
                "".join(
                    part.value if isinstance(part, ast.Constant) else "<value>"
                    for part in node.values
                ),
            )


def in_python(path: Path) -> Iterator[Mention]:
    for line, text in python_strings(path):
        yield from in_text(text, f"{path.relative_to(ROOT)}:{line}")


def in_hooks(path: Path) -> Iterator[Mention]:
    for event, groups in json.loads(path.read_text(encoding="utf-8"))["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                yield from in_code(hook["command"], f"{path.relative_to(ROOT)}:{event}")


def in_mcp(path: Path) -> Iterator[Mention]:
    for name, server in json.loads(path.read_text(encoding="utf-8"))["mcpServers"].items():
        if server["command"] == PROGRAM:
            yield Mention(f"{path.relative_to(ROOT)}:{name}", tuple(server.get("args", [])))


def all_mentions() -> list[Mention]:
    found: list[Mention] = []
    for path in sorted(SRC.rglob("*.py")):
        found += in_python(path)
    found += in_markdown(ROOT / "README.md")
    for skill in sorted((ROOT / "skills").glob("*/SKILL.md")):
        found += in_markdown(skill)
    found += in_hooks(ROOT / "hooks" / "hooks.json")
    found += in_mcp(ROOT / ".mcp.json")
    return found


# ------------------------------------------------------------------------ checking


def option_names(command: click.Command) -> dict[str, click.Option]:
    return {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }


def check(words: tuple[str, ...]) -> list[str]:
    """What does not exist in ``agentmonitors <words>``: unknown commands or options."""
    command: click.Command = cli
    path = [PROGRAM]
    rest = list(words)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        word = rest[0]
        if is_placeholder(word):
            return []  # "agentmonitors <command>": the group itself is what is named
        choices = word.split("|") if "|" in word else [word]
        found = [command.get_command(click.Context(command), choice) for choice in choices]
        missing = [c for c, sub in zip(choices, found, strict=True) if sub is None]
        if missing:
            return [f"{' '.join(path)} has no command {name!r}" for name in missing]
        if len(found) > 1:
            return []  # "monitor explain|history|test": each resolved; options are theirs
        assert found[0] is not None
        command, rest = found[0], rest[1:]
        path.append(word)
    problems: list[str] = []
    options = option_names(command)
    takes_value = False
    for word in rest:
        if takes_value:
            takes_value = False  # `--command --porcelain`: a value, not an option
            continue
        flag = word.lstrip("[").rstrip("]").split("=", 1)[0]
        if not flag.startswith("-") or flag in ("-", "--") or flag in HELP:
            continue  # an argument (checked by the command itself) or running text
        option = options.get(flag)
        if option is None:
            problems.append(f"{' '.join(path)} has no option {flag}")
            continue
        takes_value = not option.is_flag and not option.count and "=" not in word
    fast = tuple(path[1:])
    if not problems and fast == ("hook", "deliver"):
        problems += check_fast_deliver(command, rest)
    return problems


def check_fast_deliver(command: click.Command, rest: list[str]) -> list[str]:
    """``hook deliver`` runs its own parser, not click's (cli/main.py): it must accept the
    same options, each with a value of the kind the click mirror declares."""
    args: list[str] = []
    options = option_names(command)
    words = iter(rest)
    for word in words:
        flag = word.lstrip("[").rstrip("]").split("=", 1)[0]
        option = options.get(flag)
        if option is None or flag in HELP:
            continue
        args.append(flag)
        if not option.is_flag:
            if "=" not in word:
                next(words, None)
            choices = getattr(option.type, "choices", None)
            args.append(str(next(iter(choices))) if choices else "value")
    parsed = parse_deliver_args(args)
    return [f"hook deliver (fast path): {parsed}"] if isinstance(parsed, str) else []


# ------------------------------------------------------------------------ tests


def test_every_named_command_and_option_exists() -> None:
    mentions = all_mentions()
    problems = [f"{mention}: {problem}" for mention in mentions for problem in check(mention.words)]
    assert problems == [], "named in user-facing text but not in the CLI:\n" + "\n".join(problems)


def test_the_collector_sees_the_places_users_read() -> None:
    """Guards the test above from passing on nothing: known mentions from each kind of
    source are collected."""
    seen = {(m.where.split(":")[0], " ".join(m.words)) for m in all_mentions()}
    expected = {
        ("README.md", "init"),
        ("README.md", "demo"),
        ("skills/setup-monitors/SKILL.md", "daemon run --detach --reap-after-ms 0 --poll-ms 2000"),
        ("hooks/hooks.json", "hook deliver"),
        ("hooks/hooks.json", "session start"),
        (".mcp.json", "channel serve"),
        ("src/agentmonitors/cli/daemon_calls.py", "session list"),
    }
    assert expected <= seen, sorted(expected - seen)
    sources = {where for where, _ in seen}
    assert any(where.startswith("src/agentmonitors/transports/") for where in sources)
    assert len(seen) >= 60


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Run `agentmonitors doctr` to check.", "agentmonitors has no command 'doctr'"),
        ("then run agentmonitors doctr.", "agentmonitors has no command 'doctr'"),
        ("Try: agentmonitors daemon restart", "agentmonitors daemon has no command 'restart'"),
        (
            "`agentmonitors events list --sesion <id>`",
            "agentmonitors events list has no option --sesion",
        ),
        (
            "`agentmonitors monitor explain|history|tset <id>`",
            "agentmonitors monitor has no command 'tset'",
        ),
        ("`agentmonitors init [--urgnecy high|low]`", "agentmonitors init has no option --urgnecy"),
        ("`printf '{}' | agentmonitors hook deliver --verbose`", "hook deliver has no option"),
    ],
)
def test_a_missing_command_or_option_is_reported(text: str, problem: str) -> None:
    mentions = list(in_text(text, "example"))
    assert len(mentions) == 1, mentions
    assert any(problem in found for found in check(mentions[0].words)), check(mentions[0].words)


@pytest.mark.parametrize(
    "text",
    [
        "Sources are installed or removed with agentmonitors itself.",
        "the environment agentmonitors runs in",
        "pipx inject agentmonitors <package>, or uv tool install agentmonitors --with <package>",
        "`command -v agentmonitors >/dev/null 2>&1 && true`",
        "agentmonitors channel: monitoring is disabled",
        "agentmonitors:silence",
    ],
)
def test_prose_about_the_program_is_not_a_command(text: str) -> None:
    assert [problem for m in in_text(text, "example") for problem in check(m.words)] == []


def test_the_fast_hook_commands_are_the_ones_checked_here() -> None:
    """cli/main.py bypasses click for these; a new one needs its parser checked above.
    ``session start`` and ``session end`` take no options, in click as on the fast path,
    so their click mirrors already judge every option a text names; ``hook rewake``'s
    table is held to its click mirror by tests/fastpath/test_argv.py."""
    assert set(entry._FAST) == {
        ("hook", "deliver"),
        ("hook", "rewake"),
        ("session", "start"),
        ("session", "end"),
    }
    deliver = cli.get_command(click.Context(cli), "hook")
    assert isinstance(deliver, click.Group)
    mirror = deliver.get_command(click.Context(deliver), "deliver")
    assert mirror is not None
    # Every option of the click mirror (what --help shows) is one the fast parser takes.
    every = tuple(
        f"{name} x" if not o.is_flag else name for name, o in option_names(mirror).items()
    )
    assert len(every) >= 4
    assert check_fast_deliver(mirror, " ".join(every).split()) == []

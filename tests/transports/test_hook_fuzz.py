"""Every hook command, for every host, survives any stdin: exit 0, the host's "nothing"
on stdout and not a word on stderr (the reason is said under ``--debug`` only).

A seeded, deterministic corpus of about a thousand payloads (random bytes, real
Claude Code, Codex and Cursor payloads truncated and mutated, NUL and lone surrogates
inside strings, invalid UTF-8, oversized fields, 100,000-deep nesting, out-of-range
numbers, duplicated keys, JSON that is not an object) goes through the real entry
point in-process, and a stratified sample of it through the installed console script
in fresh interpreters, where nothing else has loaded the ``json`` package first.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from agentmonitors.transports.hosts import HOSTS, adapter_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SCRIPT = str(Path(sys.executable).parent / "agentmonitors")
COMMANDS = (["session", "start"], ["session", "end"], ["hook", "deliver"])
SEED = 24
CORPUS_SIZE = 1_020
SUBPROCESS_SAMPLE = 60

CLAUDE_CODE = [
    {
        "session_id": "6f1d2c3b-9a8e-4f70-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/6f1d2c3b.jsonl",
        "cwd": "/home/dev/project",
        "hook_event_name": "SessionStart",
        "source": "startup",
    },
    {
        "session_id": "6f1d2c3b-9a8e-4f70-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/6f1d2c3b.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    },
    {
        "session_id": "6f1d2c3b-9a8e-4f70-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/6f1d2c3b.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "description": "List files"},
        "tool_response": {"stdout": "README.md\nsrc\n", "stderr": "", "interrupted": False},
    },
    {
        "session_id": "6f1d2c3b-9a8e-4f70-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/6f1d2c3b.jsonl",
        "cwd": "/home/dev/project",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    },
    {
        "session_id": "6f1d2c3b-9a8e-4f70-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-project/6f1d2c3b.jsonl",
        "cwd": "/home/dev/project",
        "hook_event_name": "SessionEnd",
        "reason": "other",
    },
]

IDENTITY_FIELDS = ("session_id", "conversation_id", "cwd", "hook_event_name", "prompt")


def real_payloads() -> list[dict[str, Any]]:
    found = list(CLAUDE_CODE)
    for host in ("codex", "cursor"):
        for path in sorted((FIXTURES / host).glob("*.json")):
            found.append(json.loads(path.read_text(encoding="utf-8")))
    return found


def _random_bytes(rng: random.Random, _real: list[dict[str, Any]]) -> bytes:
    return rng.randbytes(rng.choice([0, 1, 2, 7, 64, 500, 4000]))


def _truncated(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    text = json.dumps(rng.choice(real)).encode()
    return text[: rng.randrange(len(text))]


def _mutated(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    data = bytearray(json.dumps(rng.choice(real)).encode())
    for _ in range(rng.randrange(1, 6)):
        where = rng.randrange(len(data))
        action = rng.randrange(3)
        if action == 0:
            data[where] = rng.randrange(256)
        elif action == 1:
            data.insert(where, rng.choice(b'{}[]",:\\\x00\xff\xed'))
        elif len(data) > 1:
            del data[where]
    return bytes(data)


def _with_field(rng: random.Random, real: list[dict[str, Any]], value: Any) -> dict[str, Any]:
    payload = dict(rng.choice(real))
    payload[rng.choice(IDENTITY_FIELDS)] = value
    return payload


def _nul(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    payload = _with_field(rng, real, "a\x00b")
    if rng.random() < 0.5:
        return json.dumps(payload).encode()  # as the escape \u0000
    # A raw NUL byte inside a string: invalid JSON (a control character).
    return json.dumps(payload).replace("\\u0000", "\x00").encode()


def _surrogate(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    payload = _with_field(rng, real, rng.choice(["\ud800", "x\udfff", "\ud83d"]))
    text = json.dumps(payload)  # as JSON escapes
    if rng.random() < 0.5:
        return text.encode()
    # As raw bytes: the surrogate's own UTF-8-like encoding, which is invalid UTF-8.
    return json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _invalid_utf8(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    text = json.dumps(_with_field(rng, real, "MARK")).encode()
    bad = rng.choice([b"\xff", b"\xc0\xaf", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\x80\x80"])
    return text.replace(b"MARK", b"x" + bad + b"y")


def _oversized(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    size = rng.choice([5 * 1024, 1024 * 1024])
    return json.dumps(_with_field(rng, real, "s" * size)).encode()


def _deep(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    depth = 100_000
    kind = rng.randrange(4)
    if kind == 0:
        return b"[" * depth
    if kind == 1:
        return b"[" * depth + b"]" * depth
    if kind == 2:
        return b'{"a":' * depth + b"1" + b"}" * depth
    head = json.dumps(rng.choice(real))[:-1].encode()
    return head + b',"deep":' + b"[" * depth + b"]" * depth + b"}"


def _numbers(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    number = rng.choice(["1e999", "-1e999", "NaN", "Infinity", "1" * 5000, "-0", "1e-999"])
    head = json.dumps(rng.choice(real))[:-1]
    field = rng.choice(["session_id", "loop_count", "extra", "cwd"])
    return f'{head},"{field}":{number}}}'.encode()


def _duplicated(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    payload = rng.choice(real)
    head = json.dumps(payload)[:-1]
    field = rng.choice(IDENTITY_FIELDS)
    value = rng.choice([json.dumps("other"), "null", "[]", "{}", "17", json.dumps("\ud800")])
    return f'{head},"{field}":{value}}}'.encode()


def _not_an_object(rng: random.Random, _real: list[dict[str, Any]]) -> bytes:
    value = rng.choice(
        ["[]", "null", "true", "17", '"session_id"', '[{"session_id":"x"}]', "", "   ", "\ufeff"]
    )
    return value.encode()


def _wrong_types(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    value = rng.choice([17, 1.5, None, True, [], {}, ["/tmp"], {"a": "b"}, "", "."])
    return json.dumps(_with_field(rng, real, value)).encode()


def _stray_prefix(rng: random.Random, real: list[dict[str, Any]]) -> bytes:
    prefix = rng.choice([b"\xef\xbb\xbf", b"Welcome!\n", b"\x1b[0m", b"{", b"\x00"])
    return prefix + json.dumps(rng.choice(real)).encode() + rng.choice([b"", b"\n", b" x"])


KINDS = [
    _random_bytes,
    _truncated,
    _mutated,
    _nul,
    _surrogate,
    _invalid_utf8,
    _oversized,
    _deep,
    _numbers,
    _duplicated,
    _not_an_object,
    _wrong_types,
    _stray_prefix,
]


def corpus() -> list[tuple[str, bytes]]:
    """``(kind, stdin)`` pairs, the same on every run."""
    rng = random.Random(SEED)
    real = real_payloads()
    made = []
    for index in range(CORPUS_SIZE):
        kind = KINDS[index % len(KINDS)]
        made.append((kind.__name__.lstrip("_"), kind(rng, real)))
    return made


def summary(failures: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One line per distinct failure: kind, host, command, exit code, end of stderr."""
    return sorted({(f[0], f[1], " ".join(f[2]), f[3], str(f[-1])[-160:]) for f in failures})


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def feed(monkeypatch: pytest.MonkeyPatch) -> Any:
    def set_stdin(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(data), encoding="utf-8"))

    return set_stdin


def test_the_corpus_covers_every_kind_and_is_deterministic() -> None:
    first, second = corpus(), corpus()
    assert first == second
    assert len(first) >= 1_000
    assert {kind for kind, _ in first} == {kind.__name__.lstrip("_") for kind in KINDS}


def test_every_hook_says_nothing_and_exits_0_on_any_stdin(
    feed: Any, capsys: pytest.CaptureFixture[str], isolated_environment: Path
) -> None:
    """In-process through the real entry point, as a host runs each hook."""
    rng = random.Random(SEED)
    # Some payloads name the test's own (not enabled) folder, as a host would.
    here = str(isolated_environment)
    failures = []
    for kind, made in corpus():
        stdin = made.replace(b"/home/dev/project", here.encode()) if rng.random() < 0.3 else made
        for host in HOSTS:
            nothing = adapter_for(host).nothing
            for command in COMMANDS:
                feed(stdin)
                capsys.readouterr()
                code = main([*command, "--host", host])
                out, err = capsys.readouterr()
                if (code, out, err) != (0, nothing, ""):
                    failures.append((kind, host, command, code, out[:200], err[-300:]))
    assert failures == [], summary(failures)


def _sample() -> list[tuple[int, str, bytes]]:
    """A stratified sample: every kind, each in turn, for the subprocess runs."""
    by_kind: dict[str, list[bytes]] = {}
    for kind, stdin in corpus():
        by_kind.setdefault(kind, []).append(stdin)
    picked: list[tuple[int, str, bytes]] = []
    round_ = 0
    while len(picked) < SUBPROCESS_SAMPLE:
        for kind in sorted(by_kind):
            items = by_kind[kind]
            if len(picked) < SUBPROCESS_SAMPLE:
                picked.append((len(picked), kind, items[round_ % len(items)]))
        round_ += 1
    return picked


@pytest.mark.slow
def test_the_console_script_says_nothing_and_exits_0_on_a_sample(
    isolated_environment: Path,
) -> None:
    """Fresh interpreters through the installed script: nothing else loaded ``json``
    first, which is where a private-module shortcut broke (SystemError, exit 1)."""
    failures = []
    env = {**os.environ}
    for index, kind, stdin in _sample():
        host = HOSTS[index % len(HOSTS)]
        command = COMMANDS[(index // len(HOSTS)) % len(COMMANDS)]
        done = subprocess.run(
            [SCRIPT, *command, "--host", host],
            input=stdin,
            capture_output=True,
            timeout=60,
            check=False,
            cwd=isolated_environment,
            env=env,
        )
        nothing = adapter_for(host).nothing.encode()
        if (done.returncode, done.stdout, done.stderr) != (0, nothing, b""):
            failures.append((kind, host, command, done.returncode, done.stderr[-300:]))
    assert failures == [], summary(failures)


def test_a_swallowed_failure_is_named_under_debug_only(
    feed: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hook deliver --debug`` says why it delivered nothing; stdout stays the same."""
    for host in HOSTS:
        feed(b"[" * 100_000)
        assert main(["hook", "deliver", "--host", host, "--debug"]) == 0
        out, err = capsys.readouterr()
        assert out == adapter_for(host).nothing
        assert "Traceback" not in err

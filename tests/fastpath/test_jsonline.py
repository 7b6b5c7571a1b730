"""The hook path's JSON is byte-for-byte what the json package would produce and read."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from agentmonitors.fastpath import jsonline
from agentmonitors.fastpath.jsonline import dumps, loads

CHARS = ["a", "é", "\n", "\t", "\x00", "\x1f", "\x7f", "\u2028", '"', "\\", "/", "😀", "\ud800"]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randrange(-(10**20), 10**20)
    if kind == 3:
        return rng.choice([0.1, -2.5e-300, 1e300, 3.0, rng.random()])
    if kind in (4, 5):
        return "".join(rng.choice(CHARS) for _ in range(rng.randrange(6)))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_value(rng, 4) or "k": random_value(rng, depth + 1) for _ in range(3)}


def reference_dumps(value: Any, allow_nan: bool = True) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)


def test_random_values_encode_and_decode_exactly_like_the_json_package() -> None:
    rng = random.Random(13)
    for _ in range(2000):
        value = random_value(rng)
        text = dumps(value)
        assert text == reference_dumps(value)
        spaced = json.dumps(value, indent=rng.choice([None, 2]))
        assert loads(spaced) == json.loads(spaced)
        assert loads(f" \n{text}\t\r ") == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{} x", "[1,]", "{'a': 1}", "\ufeff{}", "[1] [2]"])
def test_what_the_json_package_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"Expecting|Extra|Unexpected"):
        json.loads(text)
    with pytest.raises(ValueError, match=r"Expecting|Extra|Unexpected"):
        loads(text)


def refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def test_constants_and_unencodable_values() -> None:
    assert loads("[NaN, -Infinity]")[1] == float("-inf")
    with pytest.raises(ValueError, match="not JSON"):
        loads("NaN", parse_constant=refuse)
    assert dumps(float("nan")) == reference_dumps(float("nan")) == "NaN"
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps({"x": float("inf")}, allow_nan=False)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"x": object()})
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular"):
        dumps(circular)


def test_bad_text_is_a_value_error_in_a_fresh_interpreter() -> None:
    """Where nothing imported ``json`` before: the private ``_json`` scanner called
    directly failed there with a SystemError on a control character (issue 24)."""
    code = (
        "from agentmonitors.fastpath.jsonline import loads\n"
        "for text in ['{\"a\":\"\\x00\"}', '[' * 100000, '\"\\\\ud800', 'x']:\n"
        "    try:\n"
        "        loads(text)\n"
        "    except Exception as error:\n"
        "        kinds = [k for k in type(error).__mro__ if k.__module__ == 'builtins']\n"
        "        print(kinds[0].__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split() == ["ValueError", "RecursionError", "ValueError", "ValueError"]


# ----------------------------------------------- the small path, without the json package


def small_loads(text: str) -> Any:
    """What the small reader makes of ``text``: a value, or ``UNSURE`` (handed to json)."""
    try:
        return jsonline._decode(text, jsonline._float_constant)
    except jsonline._Unsure:
        return UNSURE


def small_dumps(value: Any, allow_nan: bool = True) -> str | None:
    parts: list[str] = []
    try:
        jsonline._encode(value, parts, allow_nan, 0)
    except jsonline._Unsure:
        return None
    return "".join(parts)


UNSURE = object()


def same(left: Any, right: Any) -> bool:
    """Equal values of equal types in the same order (NaN included)."""
    return reference_dumps(left) == reference_dumps(right)


def test_the_small_reader_reads_as_json_does_or_hands_over() -> None:
    rng = random.Random(29)
    read = 0
    for _ in range(3000):
        value = random_value(rng)
        for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
            small = small_loads(text)
            if small is not UNSURE:
                read += 1
                assert same(small, json.loads(text)), text
    # Ordinary documents take the small path; only the odd ones are handed over.
    assert read > 3000


def test_the_small_reader_never_accepts_what_json_refuses() -> None:
    from tests.transports.test_hook_fuzz import corpus

    texts = [stdin.decode("utf-8", "replace") for _kind, stdin in corpus()]
    texts += [
        "1e+-5",
        "1.",
        ".5",
        "01",
        "-",
        "1e",
        "+1",
        "[1,]",
        '{"a" 1}',
        '{"a":1,}',
        "[01]",
        "tru",
        "nul",
        "NaNx",
        "-Infinityx",
        '"\\x"',
        '"\\u12"',
        '"\\u12g4"',
        '"a\tb"',
        "[] []",
        "\ufeff[]",
        '{"a":[}',
        "[" * 300 + "]" * 300,
        '"\\ud83d\\ude00"',
        "1" * 700,
        "-0",
        "-0.0",
        "0e5",
        "1E+2",
        "[1.5e-3, -2, true, false, null, NaN, -Infinity]",
        '{"a":1,"a":2}',
        '{"k":"\u2028\x7f"}',
        " \n\t\r[] \n",
    ]
    accepted = 0
    for text in texts:
        small = small_loads(text)
        if small is UNSURE:
            continue
        accepted += 1
        try:
            expected = json.loads(text)
        except (ValueError, RecursionError):
            pytest.fail(f"the small reader accepted what json refuses: {text[:80]!r}")
        assert same(small, expected), text[:80]
    assert accepted > 100


def test_the_small_writer_writes_as_json_does_or_hands_over() -> None:
    rng = random.Random(31)
    written = 0
    for _ in range(3000):
        value = random_value(rng)
        for allow_nan in (True, False):
            small = small_dumps(value, allow_nan)
            if small is None:
                continue
            written += 1
            assert small == reference_dumps(value, allow_nan)
    assert written > 3000
    for odd in ({1: "int key"}, {"x": float("nan")}, [object()], (1, 2), True, -0.0, 10**30):
        small = small_dumps(odd)
        assert small is None or small == reference_dumps(odd)
    circular: list[Any] = []
    circular.append(circular)
    assert small_dumps(circular) is None


def test_a_hook_payload_is_read_without_the_json_package() -> None:
    """In a fresh interpreter the hook path's JSON loads neither ``json`` nor ``re``;
    anything the small path hands over still gives json's answer."""
    code = (
        "import sys\n"
        "from agentmonitors.fastpath.jsonline import dumps, loads\n"
        "value = loads(sys.stdin.read())\n"
        "print(dumps(value))\n"
        "print(sorted({'json', 're', 'enum'} & set(sys.modules)))\n"
        "loads('[\"\\\\ud800\"]')\n"
        "print(sorted({'json'} & set(sys.modules)))\n"
    )
    payload = {
        "session_id": "6f1d2c3b",
        "cwd": "/home/dev/project",
        "hook_event_name": "UserPromptSubmit",
        "prompt": 'déjà vu 😀\nline\ttab "quoted"',
        "tool_response": {"lines": [1, 2.5, None, True], "empty": {}},
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    first, modules, later = done.stdout.splitlines()
    assert first == reference_dumps(payload)
    assert (modules, later) == ("[]", "['json']")

"""The hook path's JSON is byte-for-byte what the json package would produce and read."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from agentmonitors.delivery.jsonline import dumps, loads

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
        "from agentmonitors.delivery.jsonline import loads\n"
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

"""Shape: a monitor's ``shape`` and ``payload`` blocks applied to one observation.

Three deterministic steps, all on the shared side of the per-recipient seam:

- the ``payload.transform`` CEL **gate** (``form: structured``, ``language: cel``)
  decides whether an observation goes on to Pace at all; the runtime runs it in
  ingest, before notify dispatch;
- the ``jq`` **transform** reshapes the snapshot into the event payload;
- **render** (``shape.render: rendered``) turns the snapshot plus the derive rules
  that hold into a byte-stable text artifact, which is diffed and stored instead of
  the source's ``snapshotText``.

The only time input is the ``now`` passed in (an envelope's ``observedAt``), so the
same observation shapes to the same bytes whenever it is materialized.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.policy import DerivePolicy, PayloadPolicy, ShapePolicy
from agentmonitors.sources.observation import Observation

log = get_logger("agentmonitors.runtime.shape")


@dataclass(frozen=True)
class Shaped:
    """What Shape made of one observation.

    ``payload`` is meaningful only when ``has_payload``; otherwise the observation's
    own payload stands. ``snapshot_text`` is the text to diff and store.
    """

    snapshot_text: str | None
    payload: Any = None
    has_payload: bool = False


def shaped_snapshot(observation: Observation) -> Any:
    """The value Shape works over: the structured snapshot, else the snapshot text."""
    if observation.snapshot is not None:
        return observation.snapshot
    return observation.snapshot_text


def _context(snapshot: Any) -> dict[str, Any]:
    """A CEL context: the snapshot's fields, or ``{value: x}`` for anything else."""
    if isinstance(snapshot, Mapping):
        return {str(key): value for key, value in snapshot.items()}
    return {"value": snapshot}


@lru_cache(maxsize=256)
def _cel_program(expression: str) -> Any:
    # Lazy: an optional extension; only a monitor with a CEL predicate or payload needs it.
    import cel

    return cel.compile(expression)


@lru_cache(maxsize=256)
def _jq_program(expression: str) -> Any:
    # Lazy: an optional extension; only a monitor with a jq payload transform needs it.
    import jq

    return jq.compile(expression)


def _holds(expression: str, context: dict[str, Any]) -> bool:
    """True only when the predicate evaluates to the boolean ``true``."""
    try:
        return _cel_program(expression).execute(context) is True
    except Exception as error:  # an absent field, a type mismatch: does not hold
        log.debug("CEL predicate %r did not evaluate: %s", expression, error)
        return False


# --------------------------------------------------------------------------- gate


def _gate_expression(payload: PayloadPolicy | None) -> str | None:
    if payload is None or payload.form != "structured" or payload.transform is None:
        return None
    if payload.transform.language != "cel":
        return None
    return payload.transform.expression


def passes_gate(payload: PayloadPolicy | None, observation: Observation) -> bool:
    """Whether ``observation`` survives the monitor's CEL gate (true without a gate).

    Anything but a boolean ``true`` (``false``, another value, an evaluation error)
    drops it.
    """
    expression = _gate_expression(payload)
    if expression is None:
        return True
    return _holds(expression, _context(shaped_snapshot(observation)))


# --------------------------------------------------------------------------- jq


def apply_jq(expression: str, value: Any) -> Any:
    """jq's output for ``value``: the single result, None for none, a list for several.

    Raises ``ValueError`` when jq fails on this input.
    """
    results = _jq_program(expression).input_value(value).all()
    if not results:
        return None
    if len(results) == 1:
        return results[0]
    return list(results)


# --------------------------------------------------------------------------- derive, render


def derive_facts(snapshot: Any, now_ms: int, rules: Sequence[DerivePolicy]) -> list[str]:
    """The names of the rules that hold over ``snapshot`` at ``now_ms``, in authored order.

    ``now`` (epoch milliseconds) overrides any snapshot field of that name.
    """
    context = _context(snapshot)
    context["now"] = now_ms
    return [rule.name for rule in rules if _holds(rule.when, context)]


def js_string(value: float | int) -> str:
    """A number as JavaScript's ``String()`` writes it (``1`` not ``1.0``, ``1e+21``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 10**21:
        return str(value)
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # Lazy: decimal costs a tick 2 ms; only a non-integer number in a shaped payload needs it.
    from decimal import Decimal

    # repr gives the shortest round-tripping digits, as JavaScript does.
    exact = Decimal(repr(abs(number))).normalize()
    _, digit_tuple, exponent = exact.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(str(digit) for digit in digit_tuple)
    k = len(digits)
    n = exponent + k  # the decimal point sits after n digits
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        power = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text


def _scalar(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return js_string(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _nested(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple)


def _value_lines(value: Any, depth: int = 0) -> list[str]:
    pad = "  " * depth
    lines: list[str] = []
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if _nested(item):
                lines.append(f"{pad}- [{index}]")
                lines.extend(_value_lines(item, depth + 1))
            else:
                lines.append(f"{pad}- [{index}] {_scalar(item)}")
        return lines
    if isinstance(value, Mapping):
        for key, child in sorted(
            ((str(key), child) for key, child in value.items()), key=_utf16_order
        ):
            if _nested(child):
                lines.append(f"{pad}- {key}:")
                lines.extend(_value_lines(child, depth + 1))
            else:
                lines.append(f"{pad}- {key}: {_scalar(child)}")
        return lines
    return [f"{pad}- {_scalar(value)}"]


def _utf16_order(item: tuple[str, Any]) -> bytes:
    """JavaScript's default sort order: by UTF-16 code unit, not by code point."""
    return item[0].encode("utf-16-be", "surrogatepass")


def render_artifact(snapshot: Any, facts: Sequence[str]) -> str:
    """The byte-stable text of a shaped snapshot and the facts that hold."""
    lines = ["# snapshot", *_value_lines(snapshot), "# facts"]
    lines.extend(f"- {name}" for name in facts)
    return "\n".join(lines)


# --------------------------------------------------------------------------- the stage


def shape_observation(
    observation: Observation,
    observed_at_ms: int,
    shape: ShapePolicy | None,
    payload: PayloadPolicy | None,
) -> Shaped:
    """The text and payload ``observation`` materializes with.

    The CEL gate is not re-run here (ingest already applied it); a passing gate
    delivers the snapshot itself. A failing jq program raises.
    """
    text = observation.snapshot_text
    if shape is not None and shape.render == "rendered":
        snapshot = shaped_snapshot(observation)
        text = render_artifact(snapshot, derive_facts(snapshot, observed_at_ms, shape.derive or ()))
    if payload is None or payload.form != "structured" or payload.transform is None:
        return Shaped(text)
    snapshot = shaped_snapshot(observation)
    if payload.transform.language == "jq":
        return Shaped(text, apply_jq(payload.transform.expression, snapshot), True)
    return Shaped(text, snapshot, True)

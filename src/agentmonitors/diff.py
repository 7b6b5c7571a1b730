"""Snapshot diffs: a positional text diff and a structural JSON diff, both size-capped."""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterator
from itertools import islice
from typing import NamedTuple, TypeAlias

Json: TypeAlias = "bool | int | float | str | list[Json] | dict[str, Json] | None"

JSON_DIFF_STRATEGY = "json-diff"
MAX_TEXT_LINES = 20
MAX_ENTRIES = 20
MAX_VALUE_CHARS = 300
MAX_SEGMENT_CHARS = 60
MAX_OUTPUT_CHARS = 20_000
FORMATTING_ONLY = "~ formatting-only change (no structural difference)"
# Earlier names win: an explicit id says more about identity than a display name does.
IDENTITY_KEYS = ("id", "key", "uuid", "_id", "slug", "sha", "number", "name")

_SEGMENT_SPECIALS = frozenset("\\.[]=")


class _Entry(NamedTuple):
    kind: str
    path: str
    old: Json
    new: Json


def build_diff(previous: str, current: str, strategy: str | None, *, whole: bool = False) -> str:
    """The diff between two snapshots, rendered the way ``strategy`` asks; "" when identical.

    Bounded unless ``whole``: a cut diff ends with a ``… N more …`` line saying how much it
    left out (``agentmonitors diff --all`` asks for it whole).
    """
    if strategy == JSON_DIFF_STRATEGY:
        return json_diff(previous, current, whole=whole)
    return text_diff(previous, current, whole=whole)


def text_diff(previous: str, current: str, *, whole: bool = False) -> str:
    """Changed lines by position: cheap, and stable when a snapshot only grows at the end.

    A change of line endings or of the final newline would show as lines that look
    the same (a reader strips the carriage return, and an empty last line looks like
    nothing): it is said in words instead, and the lines are compared without it.
    """
    notes = layout_notes(previous, current)
    if notes:
        previous, current = _plain_layout(previous), _plain_layout(current)
    else:
        # A final newline ends the last line; it does not start an empty one. Otherwise a
        # line appended to a file would show the empty "line" after it removed and re-added.
        previous, current = previous.removesuffix("\n"), current.removesuffix("\n")
    old_lines = previous.split("\n") if previous else []
    new_lines = current.split("\n") if current else []
    out: list[str] = [f"~ {note}" for note in notes]
    hidden = 0
    for i in range(max(len(old_lines), len(new_lines))):
        old = old_lines[i] if i < len(old_lines) else None
        new = new_lines[i] if i < len(new_lines) else None
        if old == new:
            continue
        if len(out) - len(notes) >= MAX_TEXT_LINES and not whole:
            # Counted, not rendered: the closing line says how many were left out.
            hidden += (old is not None) + (new is not None)
            continue
        if old is not None:
            out.append(f"- {i + 1}: {old}")
        if new is not None:
            out.append(f"+ {i + 1}: {new}")
    if hidden:
        out.append(f"… {hidden} more changed lines elided")
    return "\n".join(out) if whole else _cap_output("\n".join(out))


def line_ending(text: str) -> str | None:
    """``LF``, ``CRLF`` or ``mixed``: how the lines of ``text`` end; None without a line break."""
    breaks = text.count("\n")
    if not breaks:
        return None
    crlf = text.count("\r\n")
    if crlf == breaks:
        return "CRLF"
    return "LF" if crlf == 0 else "mixed"


def layout_notes(previous: str, current: str) -> list[str]:
    """What changed in the line endings and the final newline, in words ([] when nothing)."""
    if previous == current or not previous or not current:
        return []
    notes: list[str] = []
    before, after = line_ending(previous), line_ending(current)
    if before is not None and after is not None and before != after:
        notes.append(f"line endings changed from {before} to {after}")
    had, has = previous.endswith("\n"), current.endswith("\n")
    if had != has:
        notes.append("trailing newline " + ("added" if has else "removed"))
    return notes


def _plain_layout(text: str) -> str:
    """``text`` with LF line endings and no final newline, for comparing lines alone."""
    text = text.replace("\r\n", "\n")
    return text[:-1] if text.endswith("\n") else text


def json_diff(previous: str, current: str, *, whole: bool = False) -> str:
    """Structural changes between two JSON documents; the text diff when either is not JSON."""
    if previous == current:
        return ""
    try:
        old = _parse(previous)
        new = _parse(current)
        if _equal(old, new):
            notes = layout_notes(previous, current)
            return FORMATTING_ONLY + "".join(f"\n~ {note}" for note in notes)
        entries = _walk(old, new, "")
        lines = [_render(entry) for entry in (entries if whole else islice(entries, MAX_ENTRIES))]
        # Counting the rest walks them without rendering, which is the expensive part.
        hidden = sum(1 for _ in entries)
    except (ValueError, RecursionError):
        return text_diff(previous, current, whole=whole)
    if hidden:
        lines.append(f"… {hidden} more changes elided")
    return "\n".join(lines) if whole else _cap_output("\n".join(lines))


def _reject_constant(name: str) -> Json:
    # NaN and Infinity are Python extensions; a strict JSON consumer would reject them too.
    raise ValueError(f"not JSON: {name}")


def _parse(text: str) -> Json:
    value: Json = json.loads(text, parse_constant=_reject_constant)
    return value


def _cap_output(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return (
        f"{text[:MAX_OUTPUT_CHARS]}\n… {len(text) - MAX_OUTPUT_CHARS:,} more characters elided"
        f" (output truncated at {MAX_OUTPUT_CHARS:,} characters)"
    )


def _equal(a: Json, b: Json) -> bool:
    # Python says True == 1; JSON does not, so booleans only ever equal booleans.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        return all(_equal(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float):
        return isinstance(b, int | float) and a == b
    return type(a) is type(b) and a == b


def _canon(value: Json) -> Hashable:
    """A hashable stand-in that is equal exactly when the values are JSON-equal."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        # int and float hash alike when equal, so 1 and 1.0 land together as JSON wants.
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("l", tuple(_canon(item) for item in value))
    return ("d", tuple((key, _canon(value[key])) for key in sorted(value)))


def _walk(old: Json, new: Json, path: str) -> Iterator[_Entry]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            child = _join(path, _segment(key))
            if key not in new:
                yield _Entry("removed", child, old[key], None)
            elif key not in old:
                yield _Entry("added", child, None, new[key])
            else:
                yield from _walk(old[key], new[key], child)
    elif isinstance(old, list) and isinstance(new, list):
        yield from _walk_array(old, new, path)
    elif not _equal(old, new):
        yield _Entry("changed", path, old, new)


def _walk_array(old: list[Json], new: list[Json], path: str) -> Iterator[_Entry]:
    if old or new:
        old_objects = [item for item in old if isinstance(item, dict)]
        new_objects = [item for item in new if isinstance(item, dict)]
        if len(old_objects) == len(old) and len(new_objects) == len(new):
            key = _identity_key(old_objects, new_objects)
            if key is not None:
                yield from _walk_by_identity(old_objects, new_objects, key, path)
            else:
                yield from _walk_as_multiset(old, new, path)
            return
    for i in range(len(new), len(old)):
        yield _Entry("removed", f"{path}[{i}]", old[i], None)
    for i in range(len(old), len(new)):
        yield _Entry("added", f"{path}[{i}]", None, new[i])
    for i in range(min(len(old), len(new))):
        yield from _walk(old[i], new[i], f"{path}[{i}]")


def _identity_key(old: list[dict[str, Json]], new: list[dict[str, Json]]) -> str | None:
    for key in IDENTITY_KEYS:
        if _identifies(old, key) and _identifies(new, key):
            return key
    return None


def _identifies(items: list[dict[str, Json]], key: str) -> bool:
    seen: set[Hashable] = set()
    for item in items:
        value = item.get(key)
        if value is None or isinstance(value, dict | list):
            return False
        marker = _canon(value)
        if marker in seen:
            return False
        seen.add(marker)
    return True


def _walk_by_identity(
    old: list[dict[str, Json]], new: list[dict[str, Json]], key: str, path: str
) -> Iterator[_Entry]:
    old_by_id = {_canon(item[key]): item for item in old}
    new_by_id = {_canon(item[key]): item for item in new}
    removed = [item for marker, item in old_by_id.items() if marker not in new_by_id]
    added = [item for marker, item in new_by_id.items() if marker not in old_by_id]
    matched = [
        (old_by_id[marker], item) for marker, item in new_by_id.items() if marker in old_by_id
    ]
    if not removed and not added and all(_equal(a, b) for a, b in matched):
        if list(old_by_id) != list(new_by_id):
            as_json: list[Json] = list(new)
            yield _Entry("reordered", path, None, as_json)
        return
    for item in removed:
        yield _Entry("removed", _identity_path(path, key, item[key]), item, None)
    for item in added:
        yield _Entry("added", _identity_path(path, key, item[key]), None, item)
    for before, after in matched:
        yield from _walk(before, after, _identity_path(path, key, after[key]))


def _walk_as_multiset(old: list[Json], new: list[Json], path: str) -> Iterator[_Entry]:
    old_markers = [_canon(item) for item in old]
    new_markers = [_canon(item) for item in new]
    removed = _surplus(old_markers, new_markers)
    added = _surplus(new_markers, old_markers)
    if not removed and not added:
        if old_markers != new_markers:
            yield _Entry("reordered", path, None, new)
        return
    for i in removed:
        yield _Entry("removed", f"{path}[{i}]", old[i], None)
    for i in added:
        yield _Entry("added", f"{path}[{i}]", None, new[i])


def _surplus(markers: list[Hashable], others: list[Hashable]) -> list[int]:
    """Indexes of the copies ``others`` lacks; the last copies, so earlier ones read as kept."""
    extra = Counter(markers) - Counter(others)
    taken: list[int] = []
    for i in range(len(markers) - 1, -1, -1):
        if extra[markers[i]] > 0:
            extra[markers[i]] -= 1
            taken.append(i)
    return taken[::-1]


def _join(path: str, segment: str) -> str:
    return f"{path}.{segment}" if path else segment


def _identity_path(path: str, key: str, value: Json) -> str:
    shown = value if isinstance(value, str) else _dump(value)
    return f"{path}[{key}={_segment(shown)}]"


def _segment(raw: str) -> str:
    # Cut before escaping so an escape sequence is never split in half.
    cut = raw[:MAX_SEGMENT_CHARS]
    parts: list[str] = []
    for char in cut:
        if char in _SEGMENT_SPECIALS:
            parts.append("\\" + char)
        elif unicodedata.category(char) == "Cc":
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(char)
    suffix = "…" if len(raw) > MAX_SEGMENT_CHARS else ""
    return "".join(parts) + suffix


def _render(entry: _Entry) -> str:
    label = entry.kind
    if entry.path.startswith("["):
        label += entry.path
    elif entry.path:
        label += " " + entry.path
    if entry.kind == "removed":
        return f"- {label}: {_value(entry.old)}"
    if entry.kind == "added":
        return f"+ {label}: {_value(entry.new)}"
    if entry.kind == "changed":
        return f"~ {label}: {_value(entry.old)} -> {_value(entry.new)}"
    return f"~ {label}: {_value(entry.new)}"


def _value(value: Json) -> str:
    text = _dump(value)
    if len(text) > MAX_VALUE_CHARS:
        return text[:MAX_VALUE_CHARS] + "…(truncated)"
    return text


def _dump(value: Json) -> str:
    """Compact JSON with sorted keys and JavaScript's spelling of numbers."""
    if isinstance(value, dict):
        fields = (f"{_dump(key)}:{_dump(value[key])}" for key in sorted(value))
        return "{" + ",".join(fields) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(item) for item in value) + "]"
    if isinstance(value, float):
        return _js_number(value)
    return json.dumps(value, ensure_ascii=False)


def _js_number(value: float) -> str:
    # Python's repr spells floats differently from JSON.stringify (1.0, 1.5e-05); the diff
    # should show the number as JSON tooling would write it (1, 0.000015).
    if not math.isfinite(value):  # "1e400" parses to inf; JSON.stringify writes that as null
        return "null"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    digits = all_digits.lstrip("0").rstrip("0")
    # value == 0.<digits> * 10**point
    point = len(whole) + int(exponent or 0) - (len(all_digits) - len(all_digits.lstrip("0")))
    sign = "-" if value < 0 else ""
    if 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        power = point - 1
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body += f"e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + body

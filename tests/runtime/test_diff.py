from __future__ import annotations

import json

import pytest

from agentmonitors.diff import build_diff, json_diff, text_diff

FORMATTING_ONLY = "~ formatting-only change (no structural difference)"


def output_cap_marker(full: str) -> str:
    """The close of a diff cut at 20,000 characters: how many it left out."""
    left_out = len(full) - 20_000
    return f"\n… {left_out:,} more characters elided (output truncated at 20,000 characters)"


def jd(old: object, new: object) -> str:
    return json_diff(json.dumps(old), json.dumps(new))


# --- text diff ---------------------------------------------------------------------------


def test_text_diff_reports_changed_lines_with_one_based_positions() -> None:
    assert text_diff("a\nb\nc", "a\nB\nc") == "- 2: b\n+ 2: B"


def test_text_diff_compares_by_position_not_by_longest_common_subsequence() -> None:
    assert text_diff("a\nb\nc", "x\na\nb\nc") == (
        "- 1: a\n+ 1: x\n- 2: b\n+ 2: a\n- 3: c\n+ 3: b\n+ 4: c"
    )


def test_text_diff_trailing_lines_added_and_removed() -> None:
    assert text_diff("a", "a\nb\nc") == "+ 2: b\n+ 3: c"
    assert text_diff("a\nb\nc", "a") == "- 2: b\n- 3: c"
    assert text_diff("a", "a\n") == "~ trailing newline added"
    # An empty text has no lines, and a final newline ends a line rather than starting one.
    assert text_diff("", "x") == "+ 1: x"
    assert text_diff("a\n", "a\nb\n") == "+ 2: b"
    assert text_diff("a\nb\n", "a\n") == "- 2: b"
    assert text_diff("a\n", "") == "- 1: a"


def test_text_diff_says_what_changed_in_line_endings_and_the_final_newline() -> None:
    assert text_diff("a\nb\n", "a\nb") == "~ trailing newline removed"
    assert text_diff("a\nb\n", "a\r\nb\r\n") == "~ line endings changed from LF to CRLF"
    assert text_diff("a\r\nb", "a\nb\r\n") == (
        "~ line endings changed from CRLF to mixed\n~ trailing newline added"
    )
    # With a real change too: the words first, then the lines, without carriage returns.
    assert text_diff("a\r\nb\r\n", "a\nc\n") == (
        "~ line endings changed from CRLF to LF\n- 2: b\n+ 2: c"
    )
    assert json_diff('{"a": 1}', '{"a": 1}\n') == FORMATTING_ONLY + "\n~ trailing newline added"


def test_text_diff_identical_is_empty() -> None:
    assert text_diff("same\ntext", "same\ntext") == ""


def test_text_diff_stops_at_twenty_lines_and_says_how_many_it_left_out() -> None:
    old = "\n".join(f"o{i}" for i in range(30))
    new = "\n".join(f"n{i}" for i in range(30))
    lines = text_diff(old, new).split("\n")
    assert len(lines) == 21
    assert lines[-3:] == ["- 10: o9", "+ 10: n9", "… 40 more changed lines elided"]
    whole = text_diff(old, new, whole=True).split("\n")
    assert len(whole) == 60 and whole[-1] == "+ 30: n29"


def test_text_diff_cap_counts_single_sided_trailing_lines() -> None:
    new = "\n".join(f"n{i}" for i in range(30))
    lines = text_diff("x", new).split("\n")
    assert lines[:3] == ["- 1: x", "+ 1: n0", "+ 2: n1"]
    assert len(lines) == 21
    assert lines[-2:] == ["+ 19: n18", "… 11 more changed lines elided"]


def test_text_diff_is_capped_at_twenty_thousand_characters() -> None:
    out = text_diff("a", "b" * 30_000)
    full = "- 1: a\n+ 1: " + "b" * 30_000
    assert out == full[:20_000] + output_cap_marker(full)
    assert text_diff("a", "b" * 30_000, whole=True) == full


# --- json diff: objects, scalars and types -----------------------------------------------


def test_json_diff_nested_changes_in_sorted_key_order() -> None:
    old = {"b": {"y": 1, "x": [1]}, "a": "s", "c": 1, "e": {"gone": True}}
    new = {"c": 1, "a": "t", "b": {"x": [1, 2], "y": 2}, "d": None}
    assert jd(old, new) == "\n".join(
        [
            '~ changed a: "s" -> "t"',
            "+ added b.x[1]: 2",
            "~ changed b.y: 1 -> 2",
            "+ added d: null",
            '- removed e: {"gone":true}',
        ]
    )


def test_json_diff_type_changes() -> None:
    old = {"a": 1, "b": [1], "c": {"x": 1}, "d": "1"}
    new = {"a": "1", "b": {"0": 1}, "c": [1], "d": None}
    assert jd(old, new) == "\n".join(
        [
            '~ changed a: 1 -> "1"',
            '~ changed b: [1] -> {"0":1}',
            '~ changed c: {"x":1} -> [1]',
            '~ changed d: "1" -> null',
        ]
    )
    assert json_diff("[1]", '{"a":1}') == '~ changed: [1] -> {"a":1}'
    assert json_diff("1", "2") == "~ changed: 1 -> 2"


def test_json_diff_bool_is_not_a_number_but_int_equals_float() -> None:
    assert jd({"a": True, "b": 0}, {"a": 1, "b": False}) == (
        "~ changed a: true -> 1\n~ changed b: 0 -> false"
    )
    assert json_diff('{"a":1,"b":2}', '{"a":1.0,"b":2.5}') == "~ changed b: 2 -> 2.5"
    assert json_diff("[true]", "[1]") == "~ changed[0]: true -> 1"


def test_json_diff_numbers_are_written_like_json_stringify() -> None:
    new = '{"a":[1.0,1e21,1e20,0.000015,1e-7,-0.0,1E2,-2.5,12345678901234567890]}'
    assert json_diff("{}", new) == (
        "+ added a: [1,1e+21,100000000000000000000,0.000015,1e-7,0,100,-2.5,12345678901234567890]"
    )


def test_json_diff_renders_values_compact_sorted_and_unescaped() -> None:
    assert json_diff('{"a":1}', '{"a":{"z":1,"b":["é",{"y":2,"x":1}]}}') == (
        '~ changed a: 1 -> {"b":["é",{"x":1,"y":2}],"z":1}'
    )


# --- json diff: arrays -------------------------------------------------------------------


def test_json_diff_identity_arrays_removed_then_added_then_changed() -> None:
    old = {
        "items": [
            {"id": 7, "v": 1, "tags": ["a"]},
            {"id": 8, "v": 0},
            {"id": 9},
        ]
    }
    new = {
        "items": [
            {"id": 9},
            {"id": 7, "v": 2, "tags": ["a", "b"]},
            {"id": 10, "v": 3},
        ]
    }
    assert jd(old, new) == "\n".join(
        [
            '- removed items[id=8]: {"id":8,"v":0}',
            '+ added items[id=10]: {"id":10,"v":3}',
            '+ added items[id=7].tags[1]: "b"',
            "~ changed items[id=7].v: 1 -> 2",
        ]
    )


def test_json_diff_identity_at_the_root_attaches_the_bracket() -> None:
    old = [{"id": 7, "v": 1}]
    new = [{"id": 7, "v": 2}]
    assert jd(old, new) == "~ changed[id=7].v: 1 -> 2"


def test_json_diff_non_unique_identity_falls_to_the_next_key() -> None:
    old = [{"id": 1, "key": "a", "v": 1}, {"id": 1, "key": "b", "v": 2}]
    new = [{"id": 1, "key": "a", "v": 1}, {"id": 1, "key": "b", "v": 3}]
    assert jd(old, new) == "~ changed[key=b].v: 2 -> 3"


def test_json_diff_identity_must_be_a_non_null_scalar_on_every_element_of_both_sides() -> None:
    nulls = ([{"id": None, "name": "x", "v": 1}], [{"id": None, "name": "x", "v": 2}])
    assert jd(*nulls) == "~ changed[name=x].v: 1 -> 2"
    nested = ([{"id": [1], "slug": "s", "v": 1}], [{"id": [1], "slug": "s", "v": 2}])
    assert jd(*nested) == "~ changed[slug=s].v: 1 -> 2"
    missing_on_new_side = (
        [{"id": 1, "sha": "abc", "v": 1}],
        [{"sha": "abc", "v": 2}],
    )
    assert jd(*missing_on_new_side) == "- removed[sha=abc].id: 1\n~ changed[sha=abc].v: 1 -> 2"


def test_json_diff_identity_values_follow_json_equality() -> None:
    assert jd([{"id": 1}], [{"id": True}]) == (
        '- removed[id=1]: {"id":1}\n+ added[id=true]: {"id":true}'
    )
    assert json_diff('[{"id":1,"v":1}]', '[{"id":1.0,"v":2}]') == "~ changed[id=1].v: 1 -> 2"


def test_json_diff_object_arrays_without_identity_match_as_a_multiset() -> None:
    old = [{"a": 1}, {"b": 2}, {"a": 1}]
    new = [{"b": 2}, {"c": 3}, {"a": 1}]
    assert jd(old, new) == '- removed[2]: {"a":1}\n+ added[1]: {"c":3}'
    assert jd([{"x": 1}], [{"x": 2}]) == '- removed[0]: {"x":1}\n+ added[0]: {"x":2}'
    assert json_diff('[{"x":1}]', '[{"x":1.0},{"x":true}]') == '+ added[1]: {"x":true}'


def test_json_diff_other_arrays_compare_by_index() -> None:
    assert jd([1, 2, 3], [1, 5]) == "- removed[2]: 3\n~ changed[1]: 2 -> 5"
    assert jd([1, [2]], [1, [2, 3], 4]) == "+ added[2]: 4\n+ added[1][1]: 3"
    assert jd([1, 2], [2, 1]) == "~ changed[0]: 1 -> 2\n~ changed[1]: 2 -> 1"
    # One non-object element is enough to rule out identity matching.
    assert jd([{"id": 1}, 2], [{"id": 1}, 3]) == "~ changed[1]: 2 -> 3"
    assert jd([{"id": 1}], [{"id": 2}, 3]) == "+ added[1]: 3\n~ changed[0].id: 1 -> 2"


def test_json_diff_reordered_only_for_matched_arrays() -> None:
    by_id = ({"list": [{"id": 1}, {"id": 2}]}, {"list": [{"id": 2}, {"id": 1}]})
    assert jd(*by_id) == '~ reordered list: [{"id":2},{"id":1}]'
    assert jd([{"a": 1}, {"b": 2}], [{"b": 2}, {"a": 1}]) == '~ reordered: [{"b":2},{"a":1}]'
    # A real change inside a matched element wins over the reordering.
    moved_and_changed = ([{"id": 1, "v": 1}, {"id": 2}], [{"id": 2}, {"id": 1, "v": 2}])
    assert jd(*moved_and_changed) == "~ changed[id=1].v: 1 -> 2"


# --- json diff: caps and escaping --------------------------------------------------------


def test_json_diff_truncates_long_values_by_code_point() -> None:
    assert jd({"a": "x" * 400}, {"a": "y"}) == (
        '~ changed a: "' + "x" * 299 + '…(truncated) -> "y"'
    )
    assert jd({"a": "x" * 298}, {}) == '- removed a: "' + "x" * 298 + '"'
    emoji = "\U0001f600"
    assert jd({}, {"a": emoji * 400}) == '+ added a: "' + emoji * 299 + "…(truncated)"


def test_json_diff_escapes_path_segments() -> None:
    old = {"a.b": {"[x]": {"k=v\\": 1}}, "tab\there": 1, "[0]": 1}
    new = {"a.b": {"[x]": {"k=v\\": 2}}, "tab\there": 2, "[0]": 2}
    assert jd(old, new) == "\n".join(
        [
            "~ changed \\[0\\]: 1 -> 2",
            "~ changed a\\.b.\\[x\\].k\\=v\\\\: 1 -> 2",
            "~ changed tab\\u0009here: 1 -> 2",
        ]
    )
    assert jd([{"id": "a.b"}], []) == '- removed[id=a\\.b]: {"id":"a.b"}'


def test_json_diff_truncates_long_path_segments() -> None:
    assert jd({"k" * 70: 1}, {"k" * 70: 2}) == "~ changed " + "k" * 60 + "…: 1 -> 2"
    assert jd({"k" * 60: 1}, {"k" * 60: 2}) == "~ changed " + "k" * 60 + ": 1 -> 2"
    emoji = "\U0001f600"
    assert jd({emoji * 61: 1}, {emoji * 61: 2}) == "~ changed " + emoji * 60 + "…: 1 -> 2"
    # The cut happens before escaping, so no escape sequence is split.
    assert jd({"." * 70: 1}, {"." * 70: 2}) == "~ changed " + "\\." * 60 + "…: 1 -> 2"
    long_id = "x" * 80
    assert jd([{"id": long_id}], []).startswith("- removed[id=" + "x" * 60 + "…]: ")


def test_json_diff_elides_entries_after_twenty_and_counts_the_rest() -> None:
    old = {f"k{i:02d}": 0 for i in range(25)}
    new = {f"k{i:02d}": 1 for i in range(25)}
    lines = jd(old, new).split("\n")
    assert lines[:2] == ["~ changed k00: 0 -> 1", "~ changed k01: 0 -> 1"]
    assert lines[19] == "~ changed k19: 0 -> 1"
    assert lines[20:] == ["… 5 more changes elided"]
    exactly_twenty = jd({f"k{i:02d}": 0 for i in range(20)}, {f"k{i:02d}": 1 for i in range(20)})
    assert len(exactly_twenty.split("\n")) == 20
    assert "elided" not in exactly_twenty


def test_json_diff_elision_counts_nested_changes() -> None:
    old = {"deep": [{"id": i, "v": 0} for i in range(30)], "a": 0}
    new = {"deep": [{"id": i, "v": 1} for i in range(30)], "a": 1}
    lines = jd(old, new).split("\n")
    assert lines[0] == "~ changed a: 0 -> 1"
    assert lines[1] == "~ changed deep[id=0].v: 0 -> 1"
    assert lines[-1] == "… 11 more changes elided"


def test_json_diff_total_output_is_capped() -> None:
    chain = ["k" * 60] * 19
    leaves_old = {f"x{i:02d}": "a" * 400 for i in range(20)}
    leaves_new = {f"x{i:02d}": "b" * 400 for i in range(20)}
    old: object = leaves_old
    new: object = leaves_new
    for key in chain:
        old, new = {key: old}, {key: new}
    prefix = ".".join(chain)
    full = "\n".join(
        f'~ changed {prefix}.x{i:02d}: "{"a" * 299}…(truncated) -> "{"b" * 299}…(truncated)'
        for i in range(20)
    )
    assert len(full) > 20_000
    assert jd(old, new) == full[:20_000] + output_cap_marker(full)


def test_json_diff_formatting_only_and_identical() -> None:
    assert json_diff('{"a": [1, 2.0], "b": true}', '{"b":true,"a":[1,2]}') == FORMATTING_ONLY
    assert json_diff('{"a":1}', '{"a":1}') == ""
    assert json_diff('{"a":1}', '{"a":true}') == "~ changed a: 1 -> true"


def test_json_diff_falls_back_to_text_when_either_side_is_not_json() -> None:
    assert json_diff("not json", '{"a":1}') == '- 1: not json\n+ 1: {"a":1}'
    assert json_diff('{"a":1}', "{") == '- 1: {"a":1}\n+ 1: {'
    # NaN is a Python extension, not JSON.
    assert json_diff('{"a":NaN}', '{"a":1}') == '- 1: {"a":NaN}\n+ 1: {"a":1}'


# 5000 levels overflow the parser; 600 parse but overflow the structural comparison.
@pytest.mark.parametrize("depth", [5000, 600])
def test_json_diff_falls_back_to_text_when_nesting_overflows(depth: int) -> None:
    old = "[" * depth + "]" * depth
    new = "[" * depth + "1" + "]" * depth
    assert json_diff(old, new) == text_diff(old, new)
    assert json_diff(old, new).startswith("- 1: [[[")


# --- dispatch ----------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [None, "", "text", "JSON-DIFF"])
def test_build_diff_uses_the_text_diff_unless_asked_for_json(strategy: str | None) -> None:
    assert build_diff('{"a":1}', '{"a":2}', strategy) == '- 1: {"a":1}\n+ 1: {"a":2}'
    assert build_diff("same", "same", strategy) == ""


def test_build_diff_json_strategy() -> None:
    assert build_diff('{"a":1}', '{"a":2}', "json-diff") == "~ changed a: 1 -> 2"
    assert build_diff('{"a":1}', '{"a":1}', "json-diff") == ""

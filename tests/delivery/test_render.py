"""Rendering a DeliveryClaim for the hook and the MCP channel.

See docs/architecture.md, "The delivery protocol".
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import pytest

from agentmonitors.delivery.layout import event_block, fit, header_fixed_point, max_events
from agentmonitors.delivery.meta import channel_meta
from agentmonitors.delivery.packing import CHANNEL_PACKING, HOOK_PACKING
from agentmonitors.delivery.render import (
    render_channel,
    render_channel_shown,
    render_hook,
    render_hook_shown,
)
from agentmonitors.delivery.text import (
    MAX_ADDITIONAL_CONTEXT,
    MAX_CHANNEL_CONTENT,
    MAX_EVENT_DIFF,
    REMINDER,
    escape_shell_path,
    sanitize_channel,
    sanitize_hook,
    sanitize_meta,
    untrusted_field,
)

SOCK = "/tmp/am.sock"
LIST = "`agentmonitors events list --session S1 --socket '/tmp/am.sock' --unread`"
HEAD = "AgentMon: monitored changes are pending — consider handling them before continuing."
ACK = "When handled, acknowledge: agentmonitors events ack --session S1 --socket '/tmp/am.sock'"
M1 = f"\n\n[truncated — more monitor updates are pending; run {LIST} to see the rest]"
M2 = (
    "\n\n[truncated — this update was too large to show in full; the full copy stays unread"
    f" — run {LIST} to see it now]"
)
M3 = (
    "\n\n[truncated — not everything fit in this recap; the omitted content stays unread and"
    f" will reappear on future recaps until acknowledged — run {LIST} to see it now]"
)
HOOK_STEP = (
    f" Run {LIST} to see them, then "
    "`agentmonitors events ack --session S1 --socket '/tmp/am.sock'` once handled."
    " To look closer without marking anything read:"
    " `agentmonitors summary|snapshot|diff MONITOR --session S1`;"
    " what is still held: `agentmonitors inspect --session S1`."
)
CHANNEL_STEP = (
    f" Run {LIST} to see them, then call the agentmon_ack tool with the event_id values"
    " of the ones you handled."
    " To look closer without marking anything read:"
    " `agentmonitors summary|snapshot|diff MONITOR --session S1`;"
    " what is still held: `agentmonitors inspect --session S1`."
)
C1 = "\n\n(more monitor updates are pending; they will surface on a later poll)"
C2 = f"\n\n(this update was too large to show in full; run {LIST} to see the full copy)"


def uncounted(text: str) -> str:
    """``text`` with the markers' counts taken out (test_marker_counts.py and
    test_cut_counts.py check them)."""
    text = re.sub(
        r"— \d+ more monitor updates? (?:is|are) pending",
        "— more monitor updates are pending",
        text,
    )
    text = re.sub(r": [\d,]+ more characters? of this update (?:was|were) left out;", ";", text)
    text = re.sub(r" \(\d+ not shown\)", "", text)
    text = re.sub(r" \((?:\d+ not shown, and )?[\d,]+ more characters? of [^)]*\)", "", text)
    return re.sub(
        r"\(\d+ more monitor updates? (?:is|are) pending; (?:it|they) will surface on a later"
        r" poll, or run `[^`]*` to see (?:it|them) now\)",
        "(more monitor updates are pending; they will surface on a later poll)",
        text,
    )


def event(n: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "eventId": f"E{n}",
        "monitorId": f"mon-{n}",
        "title": f"Title {n}",
        "summary": f"Summary {n}",
        "objectDetail": f"Detail {n}",
        "urgency": "high",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "body": f"Body {n}.",
    }
    base.update(fields)
    return base


def claim(events: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sessionId": "S1",
        "mode": "delivery",
        "urgency": "high",
        "lifecycle": "turn-interruptible",
        "message": "1. Summary 1\n2. Summary 2",
        "unreadCounts": {"low": 0, "normal": 0, "high": len(events), "total": len(events)},
        "events": events,
    }
    base.update(fields)
    return base


def reminder_claim(message: str | None = REMINDER, **fields: Any) -> dict[str, Any]:
    return claim(
        [],
        urgency="normal",
        message=message,
        unreadCounts={"low": 0, "normal": 3, "high": 0, "total": 3},
        **fields,
    )


def big_event(n: int, size: int, char: str = "x") -> dict[str, Any]:
    return event(n, body=char * size)


def ack_ids(text: str) -> list[str]:
    match = re.search(r"--event-ids (\S+)", text)
    return match.group(1).split(",") if match else []


def block_ids(text: str) -> list[str]:
    return [f"E{n}" for n in re.findall(r"^### mon-(\d+) \(", text, flags=re.MULTILINE)]


# -- the hook body claim -----------------------------------------------------------------


def test_two_event_high_batch_renders_header_ack_line_and_blocks_exactly() -> None:
    text, shown = render_hook_shown(
        claim([event(1), event(2, diffText="- old\n+ new")]), SOCK, more_deferred=False
    )
    assert text == (
        f"{HEAD}\n{ACK} --event-ids E1,E2\n\n"
        "### mon-1 (high)\nTitle 1\nDetail 1\nSummary 1\n\nBody 1.\n"
        "### mon-2 (high)\nTitle 2\nDetail 2\nSummary 2\n\nBody 2.\n\nChanges:\n- old\n+ new"
    )
    assert shown == ["E1", "E2"]
    assert render_hook(claim([event(1), event(2)]), SOCK, more_deferred=False).count(ACK) == 1


def test_coalesced_reminder_footer_follows_the_blocks_with_the_hook_action_step() -> None:
    text = render_hook(
        claim([event(1)], coalescedReminder=REMINDER, coalescedNormalCount=2),
        SOCK,
        more_deferred=False,
    )
    assert text == (
        f"{HEAD}\n{ACK} --event-ids E1\n\n"
        "### mon-1 (high)\nTitle 1\nDetail 1\nSummary 1\n\nBody 1."
        f"\n\n{REMINDER}{HOOK_STEP}"
    )


def test_recap_renders_the_same_header_and_not_its_message() -> None:
    recap = claim([event(1), event(2)], mode="recap", lifecycle="post-compact", message="RECAP")
    del recap["urgency"]
    text = render_hook(recap, SOCK, more_deferred=False)
    assert text.startswith(f"{HEAD}\n{ACK} --event-ids E1,E2\n\n### mon-1 (high)")
    assert "RECAP" not in text


def test_session_id_and_ids_are_sanitized_and_socket_is_shell_quoted() -> None:
    text = render_hook(
        claim([event(1, eventId="E\r1")], sessionId="S\x001"), "/tmp/my sock", more_deferred=False
    )
    # Escaped, not dropped (the untrusted-text rule): nothing hides in a command.
    assert "--session S\\u00001 --socket $'/tmp/my\\x20sock' --event-ids E\\u000d1\n" in text


def test_no_socket_omits_the_socket_clause() -> None:
    text = render_hook(claim([event(1)]), "", more_deferred=False)
    assert "agentmonitors events ack --session S1 --event-ids E1\n" in text


# -- event blocks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "detail_lines"),
    [
        ({}, ["Detail 1", "Summary 1"]),
        ({"objectDetail": "Title 1"}, ["Summary 1"]),
        ({"objectDetail": "Body 1."}, ["Summary 1"]),
        ({"objectDetail": None}, ["Summary 1"]),
        ({"objectDetail": ""}, ["Summary 1"]),
        ({"summary": "Detail 1"}, ["Detail 1"]),
        ({"summary": "Title 1"}, ["Detail 1"]),
        ({"summary": "Body 1."}, ["Detail 1"]),
        ({"summary": "", "objectDetail": None}, []),
        ({"summary": "Title 1", "objectDetail": "Body 1."}, []),
    ],
)
def test_block_omits_detail_and_summary_lines_that_repeat_other_fields(
    fields: dict[str, Any], detail_lines: list[str]
) -> None:
    ev = event(1, **fields)
    if ev.get("objectDetail") is None:
        ev.pop("objectDetail")  # absent, not merely null
    block = event_block(ev, sanitize_hook)
    assert block == "\n".join(["### mon-1 (high)", "Title 1", *detail_lines]) + "\n\nBody 1."


def test_a_summary_that_is_the_body_of_several_lines_is_not_printed_twice() -> None:
    body = "Build failed on main.\nSee the log."
    ev = event(1, summary=body, body=body)
    ev.pop("objectDetail")
    block = event_block(ev, sanitize_hook)
    assert block == "### mon-1 (high)\nTitle 1\n\n" + body


@pytest.mark.parametrize("diff", [None, "", "   ", "\n\t \n"])
def test_changes_section_only_for_a_non_blank_diff(diff: str | None) -> None:
    assert "Changes:" not in event_block(event(1, diffText=diff), sanitize_hook)


def test_diff_at_the_bound_is_kept_whole() -> None:
    diff = "d" * MAX_EVENT_DIFF
    assert event_block(event(1, diffText=diff), sanitize_hook).endswith("\n\nChanges:\n" + diff)


def diff_marker(left_out: int, monitor: str = "mon-1", key: str = "mon-1") -> str:
    """The close of a cut change: how much it left out, and the command showing it whole."""
    return (
        f"\n… ({left_out:,} more characters of this change; `agentmonitors diff '{monitor}'"
        f" --object '{key}' --to 'E1' --all` shows it whole)"
    )


def test_diff_over_the_bound_is_cut_with_the_marker() -> None:
    diff = "😀" * 1000
    block = event_block(event(1, diffText=diff), sanitize_hook)
    changes = block.split("\n\nChanges:\n", 1)[1]
    kept = len(changes) - len(changes.lstrip("😀"))
    assert changes == "😀" * kept + diff_marker(1000 - kept)
    assert MAX_EVENT_DIFF - 1 <= len(changes) <= MAX_EVENT_DIFF
    # The event's own object, when it names one, is the one the command diffs.
    keyed = event_block(event(1, diffText=diff, objectKey="docs/a b.md"), sanitize_hook)
    assert keyed.endswith("--object $'docs/a\\x20b.md' --to 'E1' --all` shows it whole)")


def test_diff_is_sanitized_before_it_is_bounded() -> None:
    # Escapes lengthen the text: the bound applies to what is shown.
    diff = "a\u202e\n" * 300  # 900 code points; 2400 once each U+202E is escaped
    changes = event_block(event(1, diffText=diff), sanitize_hook).split("\nChanges:\n", 1)[1]
    escaped = "a\\u202e\n" * 300
    kept = MAX_EVENT_DIFF - len(diff_marker(len(escaped)))
    assert changes == escaped[:kept] + diff_marker(len(escaped) - kept)
    assert len(changes) == MAX_EVENT_DIFF


def test_hook_sanitizer_escapes_cr_c0_and_c1_but_keeps_newline_tab_and_markdown() -> None:
    raw = "a\rb\x00c\x1bd\x7fe\x85f\x9fg\nh\ti <x>[y]; \xa0z"
    shown = "a\\u000db\\u0000c\\u001bd\\u007fe\\u0085f\\u009fg"
    assert sanitize_hook(raw) == shown + "\nh\ti <x>[y]; \xa0z"
    block = event_block(event(1, title=raw, body=raw, monitorId="m\x07on"), sanitize_hook)
    # The title is one line: its break is escaped too; the body keeps its lines.
    assert block.startswith(
        "### m\\u0007on (high)\n" + shown + "\\u000ah\ti <x>[y]; \xa0z\nDetail 1\n"
    )
    assert block.endswith("\n\n" + shown + "\nh\ti <x>[y]; \xa0z")
    assert "\r" not in block
    assert not any(0x7F <= ord(ch) <= 0x9F for ch in block)


def test_channel_and_meta_sanitizers() -> None:
    assert sanitize_channel("<a>[b]\r\n;\n\x07") == " a  b \n;\n\\u0007"
    assert sanitize_meta(" <a>[b];c ") == "a  b  c"
    assert sanitize_meta("a\r\nb") == "a\\u000d\\u000ab"


# -- shell paths and untrusted fields ----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("/tmp/agentmon.sock", "'/tmp/agentmon.sock'"),
        ("/a-b_c/D.9", "'/a-b_c/D.9'"),
        ("/Users/me/My Project/.sock", r"$'/Users/me/My\x20Project/.sock'"),
        ("/tmp/weird ' path.sock", r"$'/tmp/weird\x20\x27\x20path.sock'"),
        ("/tmp/wörk.sock", r"$'/tmp/w\xc3\xb6rk.sock'"),
        ("/tmp/x<c>[o].sock", r"$'/tmp/x\x3cc\x3e\x5bo\x5d.sock'"),
        ("/tmp/`\r$;", r"$'/tmp/\x60\x0d\x24\x3b'"),
        ("/tmp/😀", r"$'/tmp/\xf0\x9f\x98\x80'"),
    ],
)
def test_escape_shell_path(path: str, quoted: str) -> None:
    assert escape_shell_path(path) == quoted


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_escaped_shell_paths_round_trip_through_bash() -> None:
    for path in ["/tmp/a.sock", "/tmp/we'ird dir/ö.sock", "/tmp/x<c>[o]`$(id)`\\.sock"]:
        out = subprocess.run(
            ["bash", "-c", f"printf %s {escape_shell_path(path)}"],
            capture_output=True,
            check=True,
        ).stdout
        assert out == path.encode()


def test_untrusted_field_quotes_cuts_and_escapes() -> None:
    assert untrusted_field("abc") == '"abc"'
    assert untrusted_field('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert untrusted_field("x\x85y\u2028z\u2029\x7f") == '"x\\u0085y\\u2028z\\u2029\\u007f"'
    assert untrusted_field("é😀") == '"é😀"'
    assert untrusted_field("\ud800") == '"\\ud800"'
    long = "😀" * 200
    assert untrusted_field(long) == '"' + "😀" * 128 + '…"'
    assert untrusted_field("a" * 128) == '"' + "a" * 128 + '"'


# -- caps and markers --------------------------------------------------------------------


def test_oversized_single_event_is_cut_on_a_code_point_with_m2() -> None:
    text, shown = render_hook_shown(claim([big_event(1, 5000, "😀")]), SOCK, more_deferred=False)
    assert len(text) == MAX_ADDITIONAL_CONTEXT  # code points, not UTF-16 units
    assert len(text.encode("utf-16-le")) // 2 > MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith("😀" + M2)
    # It counts the characters of the update it left out.
    assert f": {5000 - text.count('😀'):,} more characters of this update were left out;" in text
    assert M1 not in text
    text.encode("utf-8")  # no half of anything
    assert ack_ids(text) == shown == ["E1"]


def test_combining_characters_count_as_code_points() -> None:
    text = render_hook(claim([big_event(1, 3000, "e\u0301")]), SOCK, more_deferred=False)
    assert len(text) == MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith(M2)
    text.encode("utf-8")


def test_whole_blocks_deferred_get_m1_and_the_ack_line_names_only_those_shown() -> None:
    events = [big_event(n, 1500) for n in range(1, 5)]
    text, shown = render_hook_shown(claim(events), SOCK, more_deferred=False)
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith(M1)
    assert M2 not in text
    assert shown == ack_ids(text) == block_ids(text) == ["E1", "E2"]


def test_more_deferred_adds_m1_even_when_everything_fits() -> None:
    text, shown = render_hook_shown(claim([event(1), event(2)]), SOCK, more_deferred=True)
    assert uncounted(text).endswith("Body 2." + M1)
    assert shown == ["E1", "E2"]


def test_lone_cut_event_plus_deferred_work_gets_m2_then_m1() -> None:
    text, shown = render_hook_shown(claim([big_event(1, 5000)]), SOCK, more_deferred=True)
    assert len(text) == MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith("x" + M2 + M1)
    assert shown == ["E1"]


def test_recap_uses_m3_for_any_cut() -> None:
    recap = {"mode": "recap", "lifecycle": "post-compact"}
    deferred = render_hook(
        claim([big_event(n, 1500) for n in (1, 2, 3)], **recap), SOCK, more_deferred=False
    )
    assert uncounted(deferred).endswith("x" + M3)
    cut = render_hook(claim([big_event(1, 5000)], **recap), SOCK, more_deferred=True)
    assert uncounted(cut).endswith("x" + M3)
    assert cut.count("[truncated") == 1
    assert len(cut) == MAX_ADDITIONAL_CONTEXT


def test_coalesced_footer_is_reserved_out_of_the_cap() -> None:
    footer = f"\n\n{REMINDER}{HOOK_STEP}"
    two = [event(1), big_event(2, 10)]
    whole = render_hook(claim(two), SOCK, more_deferred=False)
    # Grow event 2 until the pair fills the cap exactly without a footer.
    two[1] = big_event(2, 10 + MAX_ADDITIONAL_CONTEXT - len(whole))
    assert len(render_hook(claim(two), SOCK, more_deferred=False)) == MAX_ADDITIONAL_CONTEXT
    text, shown = render_hook_shown(
        claim(two, coalescedReminder=REMINDER, coalescedNormalCount=1), SOCK, more_deferred=False
    )
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith("Body 1." + M1 + footer)
    assert shown == ack_ids(text) == ["E1"]


def test_cut_event_with_a_coalesced_footer_keeps_the_footer_whole() -> None:
    footer = f"\n\n{REMINDER}{HOOK_STEP}"
    text = render_hook(
        claim([big_event(1, 9000)], coalescedReminder=REMINDER, coalescedNormalCount=1),
        SOCK,
        more_deferred=False,
    )
    assert len(text) == MAX_ADDITIONAL_CONTEXT
    assert uncounted(text).endswith("x" + M2 + footer)
    assert f": {9000 - text.count('x'):,} more characters of this update were left out;" in text


@pytest.mark.parametrize(
    "sizes", [[10], [100] * 30, [1400, 1400, 1400], [3700, 50], [50, 3700], [800] * 7]
)
@pytest.mark.parametrize("more_deferred", [False, True])
@pytest.mark.parametrize("coalesced", [False, True])
def test_ack_ids_always_equal_the_rendered_blocks(
    sizes: list[int], more_deferred: bool, coalesced: bool
) -> None:
    events = [big_event(n, size) for n, size in enumerate(sizes, start=1)]
    extra: dict[str, Any] = (
        {"coalescedReminder": REMINDER, "coalescedNormalCount": 2} if coalesced else {}
    )
    text, shown = render_hook_shown(claim(events, **extra), SOCK, more_deferred=more_deferred)
    assert len(text) <= MAX_ADDITIONAL_CONTEXT
    assert ack_ids(text) == block_ids(text) == shown
    assert shown == [f"E{n}" for n in range(1, len(shown) + 1)]
    assert text.count("When handled, acknowledge:") == 1


# -- fit and the header fixed point ------------------------------------------------------


def test_header_fixed_point_accounts_for_the_ids_it_names() -> None:
    events = [event(1, eventId="A" * 40), event(2, eventId="B" * 40)]
    exact = len(render_hook(claim(events), SOCK, more_deferred=False))
    assert header_fixed_point(events, "S1", SOCK, exact) == 2
    assert header_fixed_point(events, "S1", SOCK, exact - 1) == 1
    one = len(render_hook(claim(events[:1]), SOCK, more_deferred=False))
    assert header_fixed_point(events, "S1", SOCK, one) == 1
    assert header_fixed_point(events, "S1", SOCK, one - 1) == 0


def test_fit_and_max_events() -> None:
    kwargs: dict[str, Any] = {"packing": HOOK_PACKING, "session_id": "S1", "socket_path": SOCK}
    small = [event(1), event(2)]
    assert fit(small, more_deferred=False, cap=4000, **kwargs) == (True, 2)
    assert fit(small, more_deferred=True, cap=4000, **kwargs) == (True, 2)
    four = [big_event(n, 1500) for n in range(1, 5)]
    assert fit(four, more_deferred=False, cap=4000, **kwargs) == (False, 2)
    assert fit(four[:2], more_deferred=True, cap=4000, **kwargs) == (True, 2)
    assert fit([big_event(1, 9000)], more_deferred=True, cap=4000, **kwargs) == (True, 1)
    assert fit([], more_deferred=True, cap=4000, **kwargs) == (True, 0)
    assert max_events(four, cap=4000, **kwargs) == 2
    assert max_events(small, cap=4000, **kwargs) == 2
    assert max_events([big_event(1, 9000), event(2)], cap=4000, **kwargs) == 1
    assert max_events([], cap=4000, **kwargs) == 0
    channel: dict[str, Any] = {"packing": CHANNEL_PACKING, "session_id": "S1", "socket_path": SOCK}
    assert max_events([big_event(n, 6000) for n in range(1, 5)], cap=20000, **channel) == 3


def test_fit_agrees_with_the_renderer_at_the_boundary() -> None:
    # Exactly at the cap with nothing deferred fits; the same claim with more deferred does not.
    two = [event(1), big_event(2, 10)]
    two[1] = big_event(
        2, 10 + MAX_ADDITIONAL_CONTEXT - len(render_hook(claim(two), SOCK, more_deferred=False))
    )
    kwargs: dict[str, Any] = {
        "packing": HOOK_PACKING,
        "session_id": "S1",
        "socket_path": SOCK,
        "cap": 4000,
    }
    assert fit(two, more_deferred=False, **kwargs) == (True, 2)
    assert fit(two, more_deferred=True, **kwargs) == (False, 1)
    assert render_hook_shown(claim(two), SOCK, more_deferred=True)[1] == ["E1"]


# -- the hook reminder -------------------------------------------------------------------


def test_reminder_renders_prefix_message_and_action_step() -> None:
    text, shown = render_hook_shown(reminder_claim(), SOCK, more_deferred=False)
    assert text == f"AgentMon: {REMINDER}{HOOK_STEP}"
    assert shown == []


@pytest.mark.parametrize("message", ["", "   ", "\n\t \n", None])
def test_blank_reminder_renders_nothing(message: str | None) -> None:
    assert render_hook(reminder_claim(message=message), SOCK, more_deferred=True) == ""


def test_oversized_reminder_is_capped_with_m2() -> None:
    text = render_hook(reminder_claim(message="m" * 5000), SOCK, more_deferred=False)
    assert len(text) == MAX_ADDITIONAL_CONTEXT
    assert text.startswith("AgentMon: mmm")
    assert uncounted(text).endswith("m" + M2)
    # The count covers the rest of the message and the action step after it.
    kept = text.index("\n\n[truncated")
    left = len("AgentMon: " + "m" * 5000 + HOOK_STEP) - kept
    assert f": {left:,} more characters of this update were left out;" in text


# -- the channel -------------------------------------------------------------------------


def test_channel_body_claim_content_and_meta_for_one_event() -> None:
    content, meta = render_channel(
        claim([event(1, body="See <b>[x]</b>\r\nok")]), SOCK, more_deferred=False
    )
    assert content == "### mon-1 (high)\nTitle 1\nDetail 1\nSummary 1\n\nSee  b  x  /b \nok"
    assert meta == {
        "lifecycle": "turn-interruptible",
        "mode": "delivery",
        "event_count": "1",
        "urgency": "high",
        "monitor_id": "mon-1",
        "event_id": "E1",
    }


def test_channel_joins_blocks_with_a_blank_line_and_adds_no_prefix_or_ack_line() -> None:
    content, meta, shown = render_channel_shown(
        claim([event(1), event(2)]), SOCK, more_deferred=True
    )
    assert uncounted(content) == (
        "### mon-1 (high)\nTitle 1\nDetail 1\nSummary 1\n\nBody 1.\n\n"
        "### mon-2 (high)\nTitle 2\nDetail 2\nSummary 2\n\nBody 2." + C1
    )
    assert meta["event_count"] == "2"
    assert "monitor_id" not in meta
    assert "event_id" not in meta
    assert shown == ["E1", "E2"]


def test_channel_coalesced_footer_and_meta() -> None:
    content, meta = render_channel(
        claim([event(1)], coalescedReminder=REMINDER, coalescedNormalCount=4),
        SOCK,
        more_deferred=False,
    )
    assert content.endswith("Body 1.\n\n" + REMINDER + CHANNEL_STEP)
    assert meta["event_count"] == "5"
    assert "monitor_id" not in meta
    assert "event_id" not in meta


def test_channel_reminder_content_and_meta() -> None:
    content, meta, shown = render_channel_shown(reminder_claim(), SOCK, more_deferred=True)
    assert content == REMINDER + CHANNEL_STEP
    assert meta == {
        "lifecycle": "turn-interruptible",
        "mode": "delivery",
        "event_count": "3",
        "urgency": "normal",
    }
    assert shown == []
    assert render_channel(reminder_claim(message=" "), SOCK, more_deferred=False)[0] == ""


def test_channel_meta_values_are_sanitized_and_keys_are_safe() -> None:
    recap = claim([event(1, monitorId="a<b>;c\nd", eventId=" [E1] ")], mode="recap")
    del recap["urgency"]
    meta = channel_meta(recap)
    assert meta["monitor_id"] == "a b  c\\u000ad"
    assert meta["event_id"] == "E1"
    assert "urgency" not in meta
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", key) for key in meta)
    assert all(isinstance(value, str) for value in meta.values())


def test_channel_cut_marker_and_deferred_marker() -> None:
    content, _meta, shown = render_channel_shown(
        claim([big_event(1, 25000)], sessionId="S;1\n"), SOCK, more_deferred=True
    )
    c2 = C2.replace("--session S1", "--session S 1\\u000a")
    assert len(content) == MAX_CHANNEL_CONTENT
    assert uncounted(content).endswith("x" + c2 + C1)
    assert shown == ["E1"]
    deferred, _meta, shown = render_channel_shown(
        claim([big_event(n, 8000) for n in (1, 2, 3)]), SOCK, more_deferred=False
    )
    assert uncounted(deferred).endswith("x" + C1)
    assert shown == ["E1", "E2"]
    for marker in (C1, C2):
        assert not set("<>[]") & set(marker)


def test_channel_cap_is_a_parameter() -> None:
    content, _meta, shown = render_channel_shown(
        claim([big_event(n, 300) for n in (1, 2, 3)]), SOCK, more_deferred=False, cap=700
    )
    assert len(content) <= 700
    assert uncounted(content).endswith(C1)
    assert shown == ["E1"]


def test_cut_first_event_of_a_larger_claim_shows_only_it_and_signposts_the_rest() -> None:
    text, shown = render_hook_shown(
        claim([big_event(1, 5000), event(2)]), SOCK, more_deferred=False
    )
    assert uncounted(text).endswith("x" + M2 + M1)
    assert shown == ack_ids(text) == block_ids(text) == ["E1"]  # the caller sees E2 unshown

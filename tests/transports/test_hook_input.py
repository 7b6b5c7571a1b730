"""Reading the delivery ids of a shown channel push from a UserPromptSubmit payload."""

from __future__ import annotations

import json

import pytest

from agentmonitors.transports.claude_code import (
    MAX_CHANNEL_DELIVERIES,
    channel_delivery_ids,
    parse_payload,
)

TAG = '<channel source="plugin:agentmonitors:agentmonitors" lifecycle="turn-interruptible"'


@pytest.mark.parametrize(
    ("prompt", "ids"),
    [
        (f'{TAG} delivery_id="01ABC">\nbody\n</channel>', ("01ABC",)),
        (f'  \n{TAG} event_count="2" delivery_id="d-1_x">\nbody\n</channel>', ("d-1_x",)),
        # Two pushes shown in one turn, one of them twice.
        (
            f'{TAG} delivery_id="a">\n1\n</channel>\n{TAG} delivery_id="b">\n2\n</channel>'
            f'{TAG} delivery_id="a">',
            ("a", "b"),
        ),
        # A typed prompt that merely mentions a tag proves nothing.
        (f'please read {TAG} delivery_id="x">', ()),
        (f"{TAG}>\nno delivery id\n</channel>", ()),
        ('<channel source="x" delivery_id="has space">', ()),
        ('<channel source="x" delivery_id="' + "x" * 65 + '">', ()),
        ("", ()),
        (None, ()),
        (42, ()),
    ],
)
def test_delivery_ids(prompt: object, ids: tuple[str, ...]) -> None:
    assert channel_delivery_ids(prompt) == ids


def test_at_most_a_handful_of_ids_are_read() -> None:
    prompt = "".join(f'{TAG} delivery_id="d{index}">x</channel>' for index in range(50))
    assert len(channel_delivery_ids(prompt)) == MAX_CHANNEL_DELIVERIES


def test_only_user_prompt_submit_carries_them() -> None:
    base = {"session_id": "s", "prompt": f'{TAG} delivery_id="d1">x</channel>'}
    prompt = parse_payload(json.dumps({**base, "hook_event_name": "UserPromptSubmit"}))
    assert prompt.channel_delivery_ids == ("d1",)
    tool = parse_payload(json.dumps({**base, "hook_event_name": "PostToolUse"}))
    assert tool.channel_delivery_ids == ()

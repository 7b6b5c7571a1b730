"""The enable file's frontmatter reads as ruamel.yaml reads it.

``fastpath/scalar_frontmatter.py`` reads ``key: value`` lines with string methods so a
hook never loads a YAML parser; over every enable file we write and every spelling the
workspace tests know, it must give what ruamel's YAML 1.2 loader gives (no frontmatter
where ruamel finds none between a leading ``---`` pair).
"""

from __future__ import annotations

import datetime
import io
from typing import Any

import pytest
from ruamel.yaml import YAML

from agentmonitors.fastpath.scalar_frontmatter import parse_scalar_frontmatter
from agentmonitors.workspace import LocalState, minimal_enable_file, render_local_state

WRITTEN = [
    minimal_enable_file(),
    render_local_state(LocalState()),
    render_local_state(
        LocalState(
            enabled=True,
            socket="/run/user/1000/agentmonitors/w.sock",
            db="/home/u/.local/share/agentmonitors/w/db.sqlite",
            reap_after_ms=0,
            last_boot_failure_at="2026-01-02T03:04:05.678Z",
            live="off",
            wake="high",
        )
    ),
    render_local_state(LocalState(enabled=False, reap_after_ms=300000, live="on", wake="all")),
]
VALUES = [
    "true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "yes", "on", "1", "0", "-3",
    "1.5", "2e3", "nan", "inf", '"true"', "'TRUE'", '"x y"', "'#1'", "true # on",
    "plain text", "/a/b.sock", "2026-01-02T03:04:05Z", "",
]  # fmt: skip
SPELLED = [f"---\nenabled: {value}\n---\n" for value in VALUES] + [
    "\ufeff---\nenabled: true\n---\n",
    "---\r\nenabled: true\r\nsocket: /s\r\n---\r\n",
    "---   \nenabled:   true   \n---\n",
    "---\nenabled: true\nreap-after-ms: 5000\nlive: off\n---\nbody: not read\n",
    "---\nenabled: true\nwake: high\n---\n",
    "---\nenabled: true\nwake: 'ALL'\n---\n",
    "enabled: true\n",
]


def ruamel_frontmatter(text: str) -> dict[str, Any] | None:
    """The mapping between a leading ``---`` pair as YAML 1.2 reads it, or None."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        return None
    for end, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            loaded = YAML(typ="safe", pure=True).load(io.StringIO("\n".join(lines[1:end])))
            return {} if loaded is None else dict(loaded)
    return None


@pytest.mark.parametrize("text", WRITTEN + SPELLED)
def test_the_frontmatter_reads_as_ruamel_reads_it(text: str) -> None:
    expected = ruamel_frontmatter(text)
    got = parse_scalar_frontmatter(text)
    if expected is None or got is None:
        assert got == expected
        return
    assert list(got) == list(expected)
    for key, value in expected.items():
        if value is None:
            # ruamel reads an empty value as null; the enable file's readers take "" as absent.
            assert got[key] == "", key
        elif isinstance(value, datetime.datetime):
            # A timestamp is kept as written (the file is rewritten with it), same instant.
            written = got[key]
            assert isinstance(written, str), key
            assert datetime.datetime.fromisoformat(written.replace("Z", "+00:00")) == value
        else:
            assert (type(got[key]), got[key]) == (type(value), value), key


def test_an_unfinished_frontmatter_is_none_for_both() -> None:
    assert parse_scalar_frontmatter("---\nenabled: true\n") is None
    assert ruamel_frontmatter("---\nenabled: true\n") is None

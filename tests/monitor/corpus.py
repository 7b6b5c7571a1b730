"""Every MONITOR.md text the project knows: the corpus the cross-checks feed to both sides.

The fixtures under tests/fixtures, the presets in catalog/presets, each bundled source's
scaffold, and every MONITOR.md written as a plain string anywhere in the test suite
(gathered the way tests/sources/test_plain_config.py gathers its watch blocks).
"""

from __future__ import annotations

import ast
from pathlib import Path

from agentmonitors.catalog import presets as presets_package
from agentmonitors.catalog.scaffold import render_template
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES

TESTS = Path(__file__).resolve().parents[1]
PRESETS = Path(presets_package.__file__).resolve().parent

# Malformed or unusual documents: both sides must agree on these too.
MALFORMED = (
    "",
    "---\n",
    "---\nwatch:\n  type: file-fingerprint\n",
    "no frontmatter at all\n",
    "---\n---\n",
    "\ufeff---\nwatch:\n  type: file-fingerprint\n  globs: a\n---\nbody\n",
    "---  \r\nwatch:\r\n  type: file-fingerprint\r\n  globs: a\r\n---\t\r\nbody\r\n",
    "----\nwatch: {}\n----\n",
    " ---\nwatch: {}\n---\n",
    "---\n- a\n- b\n---\n",
    "---\nwatch: 3\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nurgency: high..low\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nurgency: urgent\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nnotify:\n  strategy: sometimes\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nnotify:\n  strategy: debounce\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nbaseline-strategy: all\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\ntags: [1, [2]]\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\npayload:\n  form: poem\n---\n",
    "---\nwatch:\n  type: ''\n---\n",
    "---\nwatch:\n  interval: 5m\n---\n",
    "---\nname: [a]\nwatch:\n  type: file-fingerprint\n  globs: a\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\nshape:\n  render: rendered\n"
    "  derive:\n    - name: x\n---\n",
    "---\nwatch:\n  type: file-fingerprint\n  globs: a\n  interval: soon\n---\n",
    "---\nwatch: {type: file-fingerprint, globs: a}\nwatch: {type: schedule}\n---\n",
    *(
        f"---\nwatch:\n  type: file-fingerprint\n  globs: a\nexpect: {expect}\n---\n"
        for expect in (
            "2h",
            "{}",
            "[2h]",
            "{change-within: 0s}",
            "{change-within: 02h}",
            "{change-within: 500ms}",
            "{change-within: 2 h}",
            "{change-within: soon}",
            "{change-within: 5}",
            "{change-within: null}",
            "{change-withn: 2h}",
        )
    ),
)


# Every value each policy block can take, so a value one side forgets is seen.
_PLAIN = "---\nwatch:\n  type: file-fingerprint\n  globs: a\n  interval: 5m\n"
EVERY_VALUE = (
    *(
        f"{_PLAIN}payload:\n  form: {form}\n---\n"
        for form in ("prose", "structured", "artifact", "rendered")
    ),
    *(
        f"{_PLAIN}payload:\n  form: structured\n  encoding: {encoding}\n---\n"
        for encoding in ("json", "yaml", "toon", "toml")
    ),
    f"{_PLAIN}payload:\n  form: structured\n  transform:\n    language: jq\n"
    "    expression: .a\n---\n",
    f"{_PLAIN}payload:\n  form: structured\n  transform:\n    language: cel\n"
    "    expression: a.b\n---\n",
    f"{_PLAIN}notify:\n  strategy: debounce\n  settle-for: 30s\n---\n",
    f"{_PLAIN}notify:\n  strategy: throttle\n  suppress-for: 1h\n---\n",
    f"{_PLAIN}notify:\n  strategy: rollup\n  window: '0 9 * * *'\n  timezone: UTC\n---\n",
    f"{_PLAIN}baseline-strategy: incremental\nurgency: low..high\ntags: [a, b]\n---\n",
    f"{_PLAIN}shape:\n  render: rendered\n  derive:\n    - name: big\n      when: 'true'\n---\n",
    f"{_PLAIN}name: Docs\nurgency: high\n---\n",
    *(
        f"{_PLAIN}expect:\n  change-within: {window}\n---\n"
        for window in ("1s", "90s", "30m", "2h", "7d")
    ),
    f"{_PLAIN}expect:\n  change-within: 2h\n  ignored: yes\n---\n",
    f"{_PLAIN}expect: null\n---\n",
)


def written_in_tests() -> list[str]:
    """Every string literal in the test suite that is a MONITOR.md text."""
    texts = []
    for path in sorted(TESTS.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        texts += [
            node.value.lstrip()
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "watch:" in node.value
            and node.value.lstrip().startswith("---")
        ]
    return texts


def monitor_texts() -> list[str]:
    """The whole corpus, malformed cases last, without repeats."""
    fixtures = [path.read_text() for path in sorted((TESTS / "fixtures").rglob("*.md"))]
    presets = [path.read_text() for path in sorted(PRESETS.glob("*.md"))]
    scaffolds = [
        render_template(name, name=f"A {name} monitor", patterns=("docs/**/*.md",))
        for name in BUNDLED_SOURCE_NAMES
    ]
    texts = [*fixtures, *presets, *scaffolds, *EVERY_VALUE, *written_in_tests(), *MALFORMED]
    return list(dict.fromkeys(texts))

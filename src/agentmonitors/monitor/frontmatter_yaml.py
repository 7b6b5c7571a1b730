"""Loading a MONITOR.md's frontmatter YAML, with the line of every key.

The YAML is read with ruamel.yaml in safe mode under YAML 1.2 rules: ``yes``/``no``/
``on``/``off`` stay strings, there are no sexagesimal numbers, and duplicate keys are an
error rather than a silent override. Only a file the compiled-definition cache cannot
answer gets here (``monitor/parse_document.py``), so a tick never imports ruamel.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.frontmatter import (
    MAX_NESTING,
    FrontmatterError,
    SplitDocument,
    nesting_exceeds,
)
from agentmonitors.monitor.issues import Path


def _yaml() -> Any:
    class Yaml12Constructor(SafeConstructor):
        """YAML 1.2's core schema has no timestamps: ``2024-01-31`` is a string."""

    Yaml12Constructor.add_constructor(
        "tag:yaml.org,2002:timestamp",
        lambda constructor, node: constructor.construct_scalar(node),
    )
    loader = YAML(typ="safe")
    loader.version = (1, 2)
    loader.Constructor = Yaml12Constructor
    return loader


@dataclass(frozen=True)
class LoadedFrontmatter:
    data: Any
    lines: YamlLines


def load_frontmatter(split: SplitDocument) -> LoadedFrontmatter:
    """Parse the frontmatter YAML; an empty or absent block is an empty mapping."""
    if split.yaml_text is None or not split.yaml_text.strip():
        return LoadedFrontmatter({}, YamlLines(None, split.yaml_first_line))
    loader = _yaml()
    try:
        data = loader.load(split.yaml_text)
        node = loader.compose(split.yaml_text)
    except RecursionError as error:
        # The parser recurses per level: a repository's 2,000-deep list must fail this
        # one file, never the scan of every monitor (or the daemon's start).
        raise FrontmatterError(
            f"Failed to parse YAML frontmatter: nested deeper than {MAX_NESTING} levels"
        ) from error
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + split.yaml_first_line})" if mark is not None else ""
        problem = error.problem or error.context or "invalid YAML"
        duplicate = re.match(r'found duplicate key "([^"]*)"', error.problem or "")
        if duplicate:
            problem = f'duplicate key "{duplicate.group(1)}" (each key may appear once)'

        raise FrontmatterError(f"Failed to parse YAML frontmatter: {problem}{where}") from error
    except YAMLError as error:
        raise FrontmatterError(f"Failed to parse YAML frontmatter: {error}") from error
    if data is None:
        data = {}
    if nesting_exceeds(data, MAX_NESTING):
        raise FrontmatterError(
            f"Failed to parse YAML frontmatter: nested deeper than {MAX_NESTING} levels"
        )
    return LoadedFrontmatter(data, YamlLines(node, split.yaml_first_line))


class YamlLines:
    """Finds the file line on which an authored key (or list item) was written."""

    def __init__(self, root: Any, first_line: int, prefix: Path = ()) -> None:
        self._root = root
        self._first_line = first_line
        self._prefix = prefix

    def __call__(self, path: Path) -> int | None:
        """The line of the deepest part of ``path`` that exists (a missing key falls
        back to its parent's line)."""
        node = self._root
        line: int | None = None
        for step in (*self._prefix, *path):
            if isinstance(node, MappingNode):
                for key_node, value_node in node.value:
                    if key_node.value == step:
                        line = key_node.start_mark.line
                        node = value_node
                        break
                else:
                    break
            elif isinstance(node, SequenceNode) and isinstance(step, int):
                if not 0 <= step < len(node.value):
                    break
                node = node.value[step]
                line = node.start_mark.line
            else:
                break
        return None if line is None else line + self._first_line

    def table(self, limit: int = 5_000) -> dict[Path, int] | None:
        """The line of every key and list item, by path, for a lookup kept without the
        YAML nodes; None past ``limit`` entries (aliases can repeat a block many times)."""
        found: dict[Path, int] = {}
        pending: list[tuple[Any, Path]] = [(self._root, ())]
        while pending:
            node, at = pending.pop()
            if isinstance(node, MappingNode):
                children = [
                    (key_node.start_mark.line, value_node, (*at, key_node.value))
                    for key_node, value_node in node.value
                    if isinstance(key_node, ScalarNode)
                ]
            elif isinstance(node, SequenceNode):
                children = [
                    (item.start_mark.line, item, (*at, index))
                    for index, item in enumerate(node.value)
                ]
            else:
                continue
            for line, child, path in children:
                # The first of two equal keys is the one a lookup finds.
                if path in found:
                    continue
                found[path] = line + self._first_line
                if len(found) > limit:
                    return None
                pending.append((child, path))
        return found

    def under(self, prefix: Path) -> YamlLines:
        """A lookup whose paths are relative to ``prefix`` (for a nested block)."""
        return YamlLines(self._root, self._first_line, (*self._prefix, *prefix))

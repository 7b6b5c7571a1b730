"""Each idea has one home (docs/architecture.md, "Seams").

These read the code. A transport, a source or a host is never told apart by comparing its name
outside its own module, a source's members are never probed for outside the one place
that completes a plugin, an import is deferred into a function only where a fast path
needs it (with the reason written above it), and no module outgrows one reading.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import agentmonitors
from agentmonitors.delivery.transports.registry import transports
from agentmonitors.sources.registry import BUNDLED_SOURCE_NAMES
from agentmonitors.sources.traits import MEMBERS, SourceTraits
from agentmonitors.transports.hosts import HOSTS

ROOT = Path(agentmonitors.__file__).parent

# A deferred import spares a fast path (the hook, the agent's quick commands, a plain
# ``daemon once``, a command's cheap case) what it would load for nothing; the budget
# keeps such imports the exception.
DEFERRED_IMPORT_BUDGET = 150
MAX_LINES = 500
# The one place that reads a plugin source's members by name, to complete it with the
# defaults (sources/traits.py); the registry checks a plugin against the protocol.
MEMBER_READERS = {"sources/traits.py"}
SOURCE_METHODS = {name for name in MEMBERS if callable(getattr(SourceTraits, name, None))}


def _modules() -> Iterator[tuple[str, ast.Module, list[str]]]:
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        yield path.relative_to(ROOT).as_posix(), ast.parse(text), text.splitlines()


def _deferred_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    def walk(node: ast.AST, inside: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from walk(child, inside or function)

    yield from walk(tree, False)


def unexplained(tree: ast.Module, lines: list[str]) -> Iterator[int]:
    """The lines of deferred imports with no comment above them."""
    imports = list(_deferred_imports(tree))
    by_last_line = {node.end_lineno: node for node in imports}
    for node in imports:
        above = node.lineno - 1
        # One comment may cover a block of imports written one after another
        # (grouped as isort groups them, with blank lines between).
        while above > 0 and (not lines[above - 1].strip() or above in by_last_line):
            above = by_last_line[above].lineno - 1 if above in by_last_line else above - 1
        if above == 0 or not lines[above - 1].strip().startswith("#"):
            yield node.lineno


def deferred_imports() -> tuple[list[str], list[str]]:
    """Every import inside a function, and those with no reason written above them."""
    found, silent = [], []
    for name, tree, lines in _modules():
        found += [f"{name}:{node.lineno}" for node in _deferred_imports(tree)]
        silent += [f"{name}:{line}" for line in unexplained(tree, lines)]
    return found, silent


def _compared_strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        operands: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for operand in operands:
            several = isinstance(operand, ast.Tuple | ast.List | ast.Set)
            items = operand.elts if several else [operand]
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    yield item.lineno, item.value


def _own_module(name: str, module: str) -> bool:
    """A transport's or a source's own files are the ones named after it."""
    stem = name.replace("-", "_")
    return any(part.removesuffix(".py") == stem for part in module.split("/"))


def named_branches(names: set[str]) -> list[str]:
    return [
        f"{module}:{line} {value!r}"
        for module, tree, _ in _modules()
        for line, value in _compared_strings(tree)
        if value in names and not _own_module(value, module)
    ]


def method_probes() -> list[str]:
    probes = []
    for module, tree, _ in _modules():
        if module in MEMBER_READERS:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr"}
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in SOURCE_METHODS
            ):
                probes.append(f"{module}:{node.lineno} {node.args[1].value}")
    return probes


def test_no_transport_is_told_apart_by_its_name_outside_its_own_module() -> None:
    names = {transport.name for transport in transports()}
    assert {"hook", "channel", "follow"} <= names
    assert named_branches(names) == []


def test_no_source_is_told_apart_by_its_name_outside_its_own_folder() -> None:
    assert named_branches(set(BUNDLED_SOURCE_NAMES)) == []


def test_no_host_is_told_apart_by_its_name_outside_its_adapter() -> None:
    assert named_branches(set(HOSTS)) == []


def test_no_source_method_is_probed_for() -> None:
    assert {"observe", "observe_blocking", "forget", "target_problem"} <= SOURCE_METHODS
    assert method_probes() == []


def test_deferred_imports_are_few_and_each_says_why() -> None:
    found, silent = deferred_imports()
    assert len(found) <= DEFERRED_IMPORT_BUDGET, f"{len(found)} imports inside functions"
    assert silent == []


def test_no_module_is_over_500_lines() -> None:
    long = [f"{module}: {len(lines)}" for module, _, lines in _modules() if len(lines) > MAX_LINES]
    assert long == []


def test_the_checks_can_fail() -> None:
    text = 'def f(t):\n    import json\n    return t == "hook"\n'
    tree = ast.parse(text)
    assert [node.lineno for node in _deferred_imports(tree)] == [2]
    assert list(unexplained(tree, text.splitlines())) == [2]
    said = (
        "def f():\n    # Lazy: why.\n    import json\n\n    import re\n    x = 1\n    import os\n"
    )
    assert list(unexplained(ast.parse(said), said.splitlines())) == [7]
    assert list(_compared_strings(tree)) == [(3, "hook")]
    assert _own_module("file-fingerprint", "sources/file_fingerprint/traits.py")
    assert not _own_module("hook", "delivery/service.py")

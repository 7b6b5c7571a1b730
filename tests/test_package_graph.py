"""The packages form one direction of dependency (docs/architecture.md, "Package graph").

Every import counts, including the ones inside functions and under ``TYPE_CHECKING``:
a lazy import is still a dependency, just a cheaper one. The document's picture of the
graph is drawn from the imports by :func:`draw`; rewrite it with
``python -m tests.test_package_graph --write`` after a change the test reports.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import agentmonitors

ROOT = Path(agentmonitors.__file__).parent
DOCUMENT = ROOT.parent.parent / "docs" / "architecture.md"
BEGIN, END = "<!-- package-graph: begin -->", "<!-- package-graph: end -->"

# Each unit (a top-level package or module) and the units it may import. Lower layers
# come first; a unit imports only from units listed above it.
LAYERS: dict[str, set[str]] = {
    # The hand-written stand-ins of the fast path (docs/architecture.md, "Speed"):
    # standard library only, importing nothing of ours.
    "fastpath": set(),
    "untrusted": set(),
    "agent_env": set(),
    "workspace": set(),
    "paths": {"workspace"},
    "clock": set(),
    "diff": set(),
    "formats": set(),
    "monitor": {"workspace", "paths", "clock"},
    "sources": {"monitor", "workspace", "paths", "clock", "diff"},
    "catalog": {"monitor", "sources", "workspace", "paths", "clock"},
    "store": {"paths", "clock"},
    "runtime": {"catalog", "monitor", "sources", "store", "workspace", "paths", "clock", "diff"},
    "delivery": {"store", "workspace", "paths", "clock", "diff"},
    "diagnosis": {
        "runtime", "delivery", "catalog", "monitor", "sources", "store",
        "workspace", "paths", "clock", "diff",
    },
    "daemon": {
        "diagnosis", "runtime", "delivery", "catalog", "monitor", "sources", "store",
        "workspace", "paths", "clock", "diff", "formats",
    },
    "transports": {"daemon", "delivery", "workspace", "paths", "clock"},
}  # fmt: skip
# The fast path's stand-ins (lean dataclasses, digests, lazy loggers, ULIDs, JSON
# lines, glob segments, the enable file's frontmatter), the rules for untrusted input
# and the agent-host variables are leaves every unit may use.
_LEAVES = {"fastpath", "untrusted", "agent_env"}
for _unit, _allowed in LAYERS.items():
    if _unit != "fastpath":
        _allowed.update(_LEAVES - {_unit})


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "agentmonitors" or len(parts) == 1:
        return None
    return parts[1]


def imports_of(path: Path) -> Iterator[str]:
    """Every ``agentmonitors`` module or name ``path`` imports, relative ones resolved."""
    module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield ".".join([*base, node.module] if node.module else base)
            elif node.module:
                yield node.module


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        source = relative.parts[0].removesuffix(".py")
        if source in {"__init__", "__main__"}:
            continue
        targets = graph.setdefault(source, set())
        for imported in imports_of(path):
            target = unit_of(imported)
            if target is not None and target != source:
                targets.add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_no_import_cycle_between_packages() -> None:
    cycle = find_cycle(package_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_each_package_imports_only_the_layers_below_it() -> None:
    graph = package_graph()
    unexpected = {
        unit: sorted(targets - LAYERS[unit])
        for unit, targets in graph.items()
        if unit in LAYERS and targets - LAYERS[unit]
    }
    assert unexpected == {}
    # Every unit is placed (the CLI sits on top of everything and is not listed).
    assert set(graph) - {"cli"} == set(LAYERS)


def test_the_cycle_check_can_fail() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def draw(graph: dict[str, set[str]]) -> str:
    """The graph as the document shows it: each unit over the units it imports, the
    highest first, with the leaves (units importing nothing of ours) after a bar."""
    units = set(graph) | {target for targets in graph.values() for target in targets}
    height: dict[str, int] = {}

    def measure(unit: str) -> int:
        if unit not in height:
            height[unit] = 1 + max((measure(t) for t in graph.get(unit, ())), default=-1)
        return height[unit]

    for unit in units:
        measure(unit)
    order = sorted(units, key=lambda unit: (-height[unit], unit))
    table = [
        (
            unit,
            " ".join(t for t in order if t in graph[unit] and height[t] > 0),
            " ".join(t for t in order if t in graph[unit] and height[t] == 0),
        )
        for unit in order
        if height[unit] > 0
    ]
    width = max(len(inner) for _, inner, _ in table)
    rows = [f"{'unit':<11} {'imports':<{width}} | and the leaves"]
    rows.append("-" * len(rows[0]))
    rows += [f"{unit:<11} {inner:<{width}} | {leaves}".rstrip() for unit, inner, leaves in table]
    rows.append(f"{'(leaves)':<11} {' '.join(u for u in order if height[u] == 0)}")
    return "\n".join(rows)


def drawn_in_document() -> str:
    text = DOCUMENT.read_text(encoding="utf-8")
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return block.strip().removeprefix("```text").removesuffix("```").strip("\n")


def test_the_architecture_document_draws_the_graph_the_imports_make() -> None:
    drawn = draw(package_graph())
    assert drawn_in_document() == drawn, (
        "docs/architecture.md's package graph is out of date; "
        "run python -m tests.test_package_graph --write"
    )


def test_the_drawing_puts_each_unit_above_what_it_imports() -> None:
    drawn = draw({"a": {"b", "c"}, "b": {"c"}, "c": set()})
    rows = [row.split()[0] for row in drawn.splitlines()[2:]]
    assert rows == ["a", "b", "(leaves)"]
    assert drawn.splitlines()[2].split("|")[1].strip() == "c"


def _write_document() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    block = f"{BEGIN}\n```text\n{draw(package_graph())}\n```\n{END}"
    DOCUMENT.write_text(head + block + tail, encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    _write_document()

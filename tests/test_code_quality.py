"""ruff and mypy --strict are part of the suite, so CI enforces them."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_ruff_check_and_format() -> None:
    check = run(str(BIN / "ruff"), "check", "src", "tests", "benchmarks")
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = run(str(BIN / "ruff"), "format", "--check", "src")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.slow
def test_mypy_strict() -> None:
    result = run(str(BIN / "mypy"), "--strict", "src")
    assert result.returncode == 0, result.stdout + result.stderr


def test_complexity_is_capped_at_15_in_the_project_configuration() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lint = config["tool"]["ruff"]["lint"]
    assert "C90" in lint["select"]
    assert lint["mccabe"]["max-complexity"] == 15


def _our_python() -> list[Path]:
    """Every Python file of the repository but this one, which names what it refuses."""
    return [
        path
        for folder in ("src", "tests", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != Path(__file__).resolve()
    ]


def test_code_cites_the_projects_own_documentation() -> None:
    """Comments point at docs/ in this repository, never at contract files outside it
    nor at the other project (docs/compatibility.md says what we keep of it)."""
    outside = re.compile(
        r"\b[Ss]pec \d{2}\b|00-decisions|\bref \d{3}\b|§|\bthe reference\b|node-glob"
    )
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _our_python()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert cited == []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for target in re.findall(r"docs/[a-z][\w-]{2,}\.md", path.read_text(encoding="utf-8")):
            assert (ROOT / target).is_file(), f"{path.relative_to(ROOT)} cites a missing {target}"


def _private_modules(tree: ast.AST) -> list[str]:
    """Modules a tree imports by a private name: the standard library's (``_json``,
    ``_socket``) or a package's (``from toon_format import _encoder``)."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module.split(".")[0] != "agentmonitors":
                names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"_[a-z][a-z0-9_]*", node.value)
            and node.value in sys.modules
        ):
            # A name handed to an import helper: ("_sha256", "_sha2").
            names = [node.value]
        found += [
            name
            for name in names
            if name != "__future__"
            and any(part.startswith("_") and not part.startswith("__") for part in name.split("."))
        ]
    return found


def test_only_public_standard_library_modules_are_imported() -> None:
    """The interpreter's private modules (``_json``, ``_socket``, ``_sha2``) change without
    notice between versions; ``_json``'s scanner failed with a SystemError on 3.11."""
    used = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for name in _private_modules(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert used == []

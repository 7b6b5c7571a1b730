"""ruff and mypy --strict are part of the suite, so CI enforces them."""

from __future__ import annotations

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

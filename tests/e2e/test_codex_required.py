"""Whether a missing Codex CLI skips the real-Codex tests or fails them (CI fails)."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.claude_code import REPO_ROOT
from tests.e2e.claude_code import REQUIRE_ENV as CLAUDE_REQUIRE_ENV
from tests.e2e.codex_cli import REQUIRE_ENV, CodexUnavailable, skip_or_fail

NO_NPM = CodexUnavailable("no npm to install @openai/codex")


@pytest.mark.parametrize(
    ("codex", "claude"),
    [(None, None), ("", "1"), ("0", "1"), (None, "0"), (None, "")],
)
def test_a_missing_codex_skips(
    codex: str | None, claude: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ((REQUIRE_ENV, codex), (CLAUDE_REQUIRE_ENV, claude)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    with pytest.raises(pytest.skip.Exception, match="no npm to install"):
        skip_or_fail(NO_NPM)


@pytest.mark.parametrize(
    ("codex", "claude", "named"),
    [("1", None, REQUIRE_ENV), ("1", "0", REQUIRE_ENV), (None, "1", CLAUDE_REQUIRE_ENV)],
)
def test_a_missing_codex_fails_when_required(
    codex: str | None, claude: str | None, named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own variable decides; unset, the Claude Code one (which CI sets) does."""
    for name, value in ((REQUIRE_ENV, codex), (CLAUDE_REQUIRE_ENV, claude)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    with pytest.raises(pytest.fail.Exception) as failure:
        skip_or_fail(NO_NPM)
    message = str(failure.value)
    assert message.startswith(f"{named}=1: the Codex CLI is required but unavailable")
    assert "no npm to install" in message
    assert f"{REQUIRE_ENV}=0" in message  # how to skip instead


@pytest.mark.parametrize(
    ("given", "expected"),
    [({}, "1"), ({CLAUDE_REQUIRE_ENV: "0"}, "0"), ({REQUIRE_ENV: "0"}, "0")],
)
def test_ci_requires_codex_as_it_requires_claude_code(given: dict[str, str], expected: str) -> None:
    """`.ci/run`'s exports, run by bash: Codex follows the Claude Code switch by default."""
    script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    exports = "\n".join(line for line in script.splitlines() if line.startswith("export "))
    pytest_line = next(i for i, line in enumerate(script.splitlines()) if "-m pytest" in line)
    assert all(script.splitlines().index(line) < pytest_line for line in exports.splitlines())
    done = subprocess.run(
        ["bash", "-c", f'set -u\n{exports}\nprintf %s "${REQUIRE_ENV}"'],
        env={"PATH": "/usr/bin:/bin", **given},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout == expected

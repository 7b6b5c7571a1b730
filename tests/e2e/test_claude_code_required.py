"""Whether a missing Claude Code skips the real-client tests or fails them (CI fails)."""

from __future__ import annotations

import pytest

from tests.e2e.claude_code import REPO_ROOT, REQUIRE_ENV, ClaudeCodeUnavailable, skip_or_fail

NO_NPM = ClaudeCodeUnavailable("no `claude` 2.1.x on PATH and no npm to install it")


@pytest.mark.parametrize("value", [None, "", "0"])
def test_a_missing_client_skips_by_default(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(REQUIRE_ENV, raising=False)
    else:
        monkeypatch.setenv(REQUIRE_ENV, value)
    with pytest.raises(pytest.skip.Exception, match="no npm to install it"):
        skip_or_fail(NO_NPM)


def test_a_missing_client_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception) as failure:
        skip_or_fail(NO_NPM)
    message = str(failure.value)
    assert "AGENTMONITORS_REQUIRE_CLAUDE=1" in message
    assert "no npm to install it" in message
    assert "AGENTMONITORS_REQUIRE_CLAUDE=0" in message  # how to skip instead


def test_ci_requires_the_real_client_unless_told_otherwise() -> None:
    """`.ci/run` exports the variable as 1, keeping a value the caller already set."""
    script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lines = script.splitlines()
    export = f'export {REQUIRE_ENV}="${{{REQUIRE_ENV}:-1}}"'
    assert export in lines, script
    assert lines.index(export) < next(i for i, line in enumerate(lines) if "-m pytest" in line)


def test_the_readme_says_how_to_run_without_the_real_client() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{REQUIRE_ENV}=0 bash .ci/run`" in readme

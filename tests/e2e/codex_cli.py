"""Find (or install) the real Codex CLI and run it offline against a fake model API.

Where the binary comes from, in order:

1. ``$AGENTMONITORS_CODEX_BIN``, if set (it must run; a broken value is an error);
2. ``npm install --prefix <repo>/.cache/codex @openai/codex@<pinned>``, reused by later
   runs while the cached version matches the pin. ``@openai/codex`` is a launcher plus a
   per-platform native binary package; npm brings both, with no postinstall download.

When neither works (no npm, no network, a failed install) the tests skip with
:class:`CodexUnavailable`'s reason, unless the run requires real clients: then they
fail. ``$AGENTMONITORS_REQUIRE_CODEX`` decides; unset, it follows
``$AGENTMONITORS_REQUIRE_CLAUDE`` (which CI sets), so one switch requires, or skips,
every real client, and the sibling can still turn off Codex alone.

Isolation: every run gets a fresh ``HOME`` and ``CODEX_HOME`` whose ``config.toml``
selects a custom model provider (Responses wire format) on the fake API's loopback URL,
trusts the test project (so its ``.codex/`` layer, and our hooks in it, load) and turns
analytics, feedback and update checks off. The proxy variables also point at the fake
API, so any request that is not for the model would show up in its log.
Every process is started in its own process group, killed when the run ends.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.e2e import npm_client
from tests.e2e.claude_code import (
    PASSED_THROUGH,
    REPO_ROOT,
    parse_events,
    venv_bin,
)
from tests.e2e.claude_code import REQUIRE_ENV as CLAUDE_REQUIRE_ENV

CACHE_DIR = REPO_ROOT / ".cache" / "codex"
BIN_ENV = "AGENTMONITORS_CODEX_BIN"
REQUIRE_ENV = "AGENTMONITORS_REQUIRE_CODEX"
PACKAGE = "@openai/codex"
PINNED_VERSION = "0.169.0"
VERSION_RE = re.compile(r"codex-cli (\d+\.\d+\.\d+)")

TURN_TIMEOUT_S = 120.0

PROVIDER = "agentmonitors-fake"
API_KEY_ENV = "AGENTMONITORS_FAKE_OPENAI_KEY"
DUMMY_API_KEY = "sk-agentmonitors-e2e-dummy-key"
MODEL = "gpt-fake-model"


class CodexUnavailable(Exception):
    """No usable Codex CLI here; the message says why (a skip reason)."""


class CodexError(AssertionError):
    """Codex ran but did not behave (timeout, early exit, no turn)."""


@dataclass(frozen=True)
class Codex:
    path: str
    version: str
    source: str  # "env", "cache" or "npm install"
    install_seconds: float | None = None
    install_bytes: int | None = None

    def describe(self) -> str:
        text = f"Codex CLI {self.version} ({self.source}: {self.path})"
        if self.install_seconds is not None and self.install_bytes is not None:
            text += (
                f"; npm install took {self.install_seconds:.1f}s,"
                f" {self.install_bytes / 1e6:.0f} MB on disk"
            )
        return text


# ------------------------------------------------------------------------ locating


def _version_env(home: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update({"HOME": home, "CODEX_HOME": home, "PATH": os.environ.get("PATH", "")})
    return env


def binary_version(path: str) -> str | None:
    """``<path> --version``'s x.y.z, run with a throw-away HOME; None if it does not run."""
    return npm_client.binary_version(path, VERSION_RE, _version_env)


def install_with_npm(cache: Path = CACHE_DIR, version: str = PINNED_VERSION) -> Codex:
    """The cached install if it has ``version``, else a fresh ``npm install`` into ``cache``
    (a binary that does not run usually means no native build for this platform)."""
    try:
        found = npm_client.cached_or_installed(cache, PACKAGE, version, "codex", binary_version)
    except npm_client.NpmInstallFailed as error:
        raise CodexUnavailable(f"Codex CLI not found: set {BIN_ENV}; {error}") from None
    return Codex(*found)


def locate_codex() -> Codex:
    """The CLI to test with; :class:`CodexUnavailable` when there is none."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        version = binary_version(explicit)
        if version is None:
            # An explicit choice that does not run is a configuration error, not a skip.
            raise CodexError(f"{BIN_ENV}={explicit!r}: `--version` does not run")
        return Codex(explicit, version, "env")
    return install_with_npm()


def required_setting() -> tuple[str, str]:
    """``(variable, value)`` deciding whether a missing Codex fails the run."""
    own = os.environ.get(REQUIRE_ENV)
    if own is not None:
        return REQUIRE_ENV, own
    return CLAUDE_REQUIRE_ENV, os.environ.get(CLAUDE_REQUIRE_ENV, "")


def skip_or_fail(reason: CodexUnavailable) -> NoReturn:
    """Skip the test, or fail it when this run requires the real client."""
    name, value = required_setting()
    if value not in ("", "0"):
        pytest.fail(
            f"{name}={value}: the Codex CLI is required but unavailable: {reason}"
            f" (set {REQUIRE_ENV}=0 to skip the Codex tests instead)",
            pytrace=False,
        )
    pytest.skip(str(reason))


# ------------------------------------------------------------------------ environment


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_config(codex_home: Path, base_url: str, trusted_projects: Sequence[Path]) -> Path:
    """``$CODEX_HOME/config.toml``: the fake provider, trusted projects, nothing remote."""
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = [
        f"model = {toml_string(MODEL)}",
        f"model_provider = {toml_string(PROVIDER)}",
        "check_for_update_on_startup = false",
        # No sandbox around the model's commands: Codex's Linux sandbox puts an empty
        # `.git` folder in each writable root while a command runs (`/tmp` among them),
        # and for that moment every test folder under `/tmp` without a project marker of
        # its own would look like part of a repository rooted at `/tmp`. The tests check
        # hooks, which run outside the sandbox either way.
        'sandbox_mode = "danger-full-access"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        f"[model_providers.{PROVIDER}]",
        'name = "AgentMonitors fake Responses API"',
        f"base_url = {toml_string(base_url)}",
        'wire_api = "responses"',
        f"env_key = {toml_string(API_KEY_ENV)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    for project in trusted_projects:
        lines += ["", f"[projects.{toml_string(str(project))}]", 'trust_level = "trusted"']
    path = codex_home / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def isolated_env(
    home: Path, codex_home: Path, api_root_url: str, xdg_data_home: Path | None = None
) -> dict[str, str]:
    """A bare environment: our venv first on PATH so the hooks find ``agentmonitors``."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    data = xdg_data_home if xdg_data_home is not None else home / ".local" / "share"
    env.update(
        {
            "HOME": str(home),
            "CODEX_HOME": str(codex_home),
            "PATH": os.pathsep.join([venv_bin(), os.environ.get("PATH", os.defpath)]),
            "XDG_DATA_HOME": str(data),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            API_KEY_ENV: DUMMY_API_KEY,
            "HTTPS_PROXY": api_root_url,
            "HTTP_PROXY": api_root_url,
            "ALL_PROXY": api_root_url,
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    return env


# ------------------------------------------------------------------------ exec


@dataclass
class ExecRun:
    """One finished ``codex exec --json``."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def events(self) -> list[dict[str, Any]]:
        return parse_events(self.stdout)

    def agent_messages(self) -> list[str]:
        return [
            str(event["item"].get("text"))
            for event in self.events
            if event.get("type") == "item.completed"
            and event.get("item", {}).get("type") == "agent_message"
        ]

    @property
    def thread_id(self) -> str | None:
        started = [e for e in self.events if e.get("type") == "thread.started"]
        return str(started[0]["thread_id"]) if started else None

    def describe(self) -> str:
        return (
            f"argv: {self.argv}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )


def run_exec(
    codex: Codex,
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    args: Sequence[str] = (),
    timeout: float = TURN_TIMEOUT_S,
) -> ExecRun:
    """``codex exec --json <args> <prompt>`` once, stdin closed, with a timeout."""
    argv = [codex.path, "exec", "--json", *args, prompt]
    try:
        returncode, stdout, stderr, seconds = npm_client.run_to_end(
            argv, cwd=cwd, env=env, timeout=timeout
        )
    except npm_client.TimedOut as late:
        run = ExecRun(argv, -1, late.stdout, late.stderr, late.seconds)
        raise CodexError(f"codex exec timed out after {timeout}s\n{run.describe()}") from None
    return ExecRun(argv, returncode, stdout, stderr, seconds)

"""An interactive Claude Code session under tmux, offline, with our plugin loaded.

Plugin ``monitors`` are armed only in interactive sessions in a trusted folder, so these
tests drive the real TUI through a private tmux server (its own socket under the test's
folder): ``~/.claude.json`` is seeded so no onboarding, API-key or trust dialog waits for
a key, the plugin is loaded from the checkout with ``--plugin-dir``, and keys are sent
with ``tmux send-keys``. The server is killed on exit, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from tests.e2e.claude_code import DUMMY_API_KEY, ClaudeCode, claude_argv

TMUX = shutil.which("tmux")


def seed_claude_json(home: Path, project: Path) -> None:
    """Onboarding done, our dummy key approved, the project folder trusted.

    Claude Code remembers an approved key by its last 20 characters.
    """
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {"approved": [DUMMY_API_KEY[-20:]], "rejected": []},
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        ),
        encoding="utf-8",
    )


@dataclass
class TmuxClaude:
    """``claude --session-id <id> --plugin-dir <repo>`` in a detached tmux window."""

    claude: ClaudeCode
    cwd: Path
    env: Mapping[str, str]
    session_id: str
    socket: Path
    started_at: float = field(default=0.0)

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None
        return subprocess.run(
            [TMUX, "-S", str(self.socket), *args],
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def __enter__(self) -> TmuxClaude:
        argv = claude_argv(self.claude, ["--session-id", self.session_id])
        variables = [part for name, value in self.env.items() for part in ("-e", f"{name}={value}")]
        started = self.tmux(
            "new-session", "-d", "-x", "200", "-y", "50", "-c", str(self.cwd), *variables, *argv
        )
        assert started.returncode == 0, started.stderr
        self.started_at = time.time()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p").stdout

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter, as a user does."""
        self.tmux("send-keys", "-l", text)
        time.sleep(0.3)  # the TUI reads a paste and a key press apart
        self.tmux("send-keys", "Enter")

    def close(self) -> None:
        """``/exit`` (SessionEnd runs), then the tmux server goes, with anything left."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            if self.tmux("has-session").returncode == 0:
                self.type("/exit")
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and self.tmux("has-session").returncode == 0:
                    time.sleep(0.2)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.tmux("kill-server")

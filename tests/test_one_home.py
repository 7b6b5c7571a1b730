"""Ideas that were written twice and now have one home each (docs/architecture.md, "Seams").

Each row is a line of code that says the idea, and the module where it lives: it stands
there once and nowhere else in the package, so a second copy of the idea shows here
rather than drifting apart from the first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentmonitors

ROOT = Path(agentmonitors.__file__).parent

# What the code says -> the one module that says it.
HOMES = {
    # The options many commands share, worded once.
    'help="Project directory (default: the current project)."': "cli/common_options.py",
    'help="Unix socket of the daemon."': "cli/common_options.py",
    'help="Monitors folder (default: <project>/.claude/monitors)."': "cli/common_options.py",
    'help="The agent host whose hook runs this': "cli/common_options.py",
    # A transport's request checks, and the hook's rendering that others reuse.
    "transport's cap is at least": "delivery/transports/base.py",
    "return render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)\n": (
        "delivery/transports/hook.py"
    ),
    # doctor's problems that several transports or settings share.
    '"active lead session {lead.session_id} (host {lead.host_session_id}) has': (
        "delivery/transports/health.py"
    ),
    "!r} is neither ": "delivery/transports/follow.py",
    # A session found by its id, and a session made dormant.
    '"SELECT * FROM agent_sessions WHERE id = ?"': "delivery/sessions.py",
    "UPDATE agent_sessions SET status = 'dormant'": "delivery/dormancy.py",
    # A host hook that runs the CLI only when it is on the PATH.
    "command -v agentmonitors >/dev/null 2>&1; then": "transports/hosts/install.py",
    # verify waiting for a daemon's socket.
    "if ping(socket_path)": "diagnosis/verify_daemon.py",
}


def _occurrences(phrase: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(ROOT.rglob("*.py")):
        count = path.read_text(encoding="utf-8").count(phrase)
        if count:
            found[path.relative_to(ROOT).as_posix()] = count
    return found


@pytest.mark.parametrize(("phrase", "home"), HOMES.items())
def test_each_idea_stands_once_in_its_home(phrase: str, home: str) -> None:
    assert _occurrences(phrase) == {home: 1}

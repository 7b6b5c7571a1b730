"""A daemon stalled (SIGSTOP) while hooks wait leaves no lease behind once it resumes.

The hooks that timed out left before their reply was written; the reservation each one
made on resume must be given back, or its event would be withheld for the whole lease.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.transports.clocked_project import Project, clocked_project  # noqa: F401
from tests.waiting import wait_for

pytestmark = pytest.mark.slow


def test_hooks_that_timed_out_on_a_stalled_daemon_leave_no_reservation(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    project.start_session("host-1")
    event_id = project.settled_change()
    process = project.daemon.process
    assert process is not None

    process.send_signal(signal.SIGSTOP)
    try:
        # Two prompts while the daemon is stalled: each hook gives up on its own
        # timeout, prints nothing and exits 0 (a hook never breaks a prompt).
        waiting = [
            subprocess.Popen(
                [sys.executable, "-m", "agentmonitors", "hook", "deliver"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=project.root,
            )
            for _ in range(2)
        ]
        payload = project.payload("UserPromptSubmit", "host-1", prompt="hello")
        outputs = [hook.communicate(json.dumps(payload).encode(), timeout=60) for hook in waiting]
        assert [hook.returncode for hook in waiting] == [0, 0]
        assert [out for out, _err in outputs] == [b"", b""]
    finally:
        process.send_signal(signal.SIGCONT)

    # On resume the daemon reads both queued requests and reserves for each; the
    # replies find no reader, and the leases go back. Until they do, the event is
    # withheld, so wait for the daemon to have worked through its backlog.
    started = time.monotonic()
    wait_for(lambda: project.ipc("ping", {}) == {"ok": True})
    out, _err = project.prompt("host-1", "again")

    assert "Read the changed note." in out, out
    assert project.states("host-1")[event_id] != "unread"
    # Well inside the 30 s lease the old behaviour would have withheld it for.
    assert time.monotonic() - started < 20
    assert os.kill(process.pid, 0) is None

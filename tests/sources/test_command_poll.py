"""command-poll against real subprocesses: strategies, health edges, timeouts and caps."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.command_poll import CommandPollSource, command_exec, resolve_cwd
from agentmonitors.sources.command_poll.command_exec import (
    STDOUT_CAP_BYTES,
    CommandFailure,
    run_command,
)
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.permit import TRUSTED
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.store.database import Database
from tests.conftest import CliResult

PY = sys.executable
START = 1_780_000_000_000


def observe(
    config: Mapping[str, Any], state: Any = None, workspace: Path | None = None
) -> ObservationResult:
    context = ObservationContext(
        previous_state=state,
        now_ms=START,
        workspace_path=str(workspace) if workspace is not None else None,
        monitor_id="cmd",
        permit=TRUSTED,
    )
    return asyncio.run(CommandPollSource().observe(dict(config), context))


def cat_file(path: Path, *, exit_code: int = 0) -> list[str]:
    """argv printing ``path``'s text and exiting with ``exit_code``."""
    script = f"import sys; sys.stdout.write(open({str(path)!r}).read()); sys.exit({exit_code})"
    return [PY, "-c", script]


def exit_with_file(path: Path) -> list[str]:
    """argv printing a constant and exiting with the number stored in ``path``."""
    return [PY, "-c", f"import sys; print('same'); sys.exit(int(open({str(path)!r}).read()))"]


def gone(pid: int, within_s: float = 3.0) -> bool:
    """Whether ``pid`` no longer runs (absent, or a zombie waiting for its reaper)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def read_pid(path: Path, within_s: float = 3.0) -> int:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"no pid written to {path}")


# --------------------------------------------------------------------- text-diff


def test_text_diff_baselines_then_reports_a_change(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("one\n")
    config = {"command": cat_file(data)}
    first = observe(config)
    assert first.observations == []
    assert first.next_state == {
        "stdout": "one\n",
        "exitCode": 0,
        "truncated": False,
        "health": "ok",
        "baselined": True,
    }
    assert observe(config, first.next_state).observations == []

    data.write_text("two\n")
    second = observe(config, first.next_state)
    (change,) = second.observations
    key = " ".join(config["command"])
    assert change.title == change.summary
    assert change.title.startswith("Command output changed: ")
    assert change.object_key == key
    assert change.query_scope == {"command": key}
    assert change.change_kind == "modified"
    assert change.snapshot_text == "two\n"
    assert change.payload == {
        "command": config["command"],
        "exitCode": 0,
        "strategy": "text-diff",
        "stdout": "two\n",
        "truncated": False,
    }
    assert change.snapshot == {
        "command": config["command"],
        "exitCode": 0,
        "stdoutLength": 4,
        "strategy": "text-diff",
    }
    assert second.next_state["stdout"] == "two\n"


def test_key_names_the_object_and_long_keys_are_shortened_in_titles(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("a")
    argv = [*cat_file(data), "x" * 100]
    baseline = observe({"command": argv}).next_state
    data.write_text("b")
    (change,) = observe({"command": argv}, baseline).observations
    assert change.object_key == " ".join(argv)
    shown = change.title.removeprefix("Command output changed: ")
    assert len(shown) == 60 and shown.endswith("…")

    (named,) = observe({"command": argv, "key": "my-check"}, baseline).observations
    assert named.title == "Command output changed: my-check"
    assert named.object_key == "my-check"
    assert named.query_scope == {"command": "my-check"}
    assert observe({"command": argv, "key": ""}, baseline).observations[0].object_key == " ".join(
        argv
    )


def test_a_malformed_previous_state_counts_as_no_baseline(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("new")
    config = {"command": cat_file(data)}
    partial = {"stdout": "old", "exitCode": 0, "truncated": False, "health": "ok"}
    result = observe(config, partial)
    assert result.observations == []
    assert result.next_state["baselined"] is True
    wrong_type = {**partial, "baselined": True, "exitCode": True}
    assert observe(config, wrong_type).observations == []


def test_invalid_config_raises_in_the_reference_wording() -> None:
    with pytest.raises(ValueError, match=r"watch\.command: must be a non-empty array"):
        observe({"command": "git status"})
    with pytest.raises(ValueError, match="requires strategy: json-diff"):
        observe({"command": ["true"], "change-detection": {"ignore-paths": ["$.a"]}})


# --------------------------------------------------------------------- json-diff


def test_json_diff_compares_meaning_not_spelling(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text('{"b": [1, 2], "a": {"x": 1, "y": true}, "at": "09:00"}')
    config = {
        "command": cat_file(data),
        "change-detection": {"strategy": "json-diff", "ignore-paths": ["$.at", "a.gone.deep"]},
    }
    state = observe(config).next_state

    # Key order, whitespace, 1 vs 1.0 and an ignored field are not changes.
    data.write_text('{\n  "a": {"y": true, "x": 1.0},\n  "b": [1, 2.0],\n  "at": "10:30"\n}\n')
    same = observe(config, state)
    assert same.observations == []

    # true is not 1, and array order counts.
    data.write_text('{"a": {"x": 1, "y": 1}, "b": [1, 2]}')
    (changed,) = observe(config, same.next_state).observations
    assert changed.payload["strategy"] == "json-diff"
    assert changed.snapshot["strategy"] == "json-diff"

    data.write_text('{"a": {"x": 1, "y": true}, "b": [2, 1]}')
    assert len(observe(config, same.next_state).observations) == 1


def test_json_diff_falls_back_to_text_when_output_is_not_json(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("not json")
    config = {"command": cat_file(data), "change-detection": {"strategy": "json-diff"}}
    state = observe(config).next_state
    assert observe(config, state).observations == []
    data.write_text("not json either")
    assert len(observe(config, state).observations) == 1


def test_collection_reports_items_added_changed_and_removed(tmp_path: Path) -> None:
    data = tmp_path / "tasks.json"

    def write(*tasks: dict[str, Any]) -> None:
        data.write_text(json.dumps({"fetchedAt": time.time(), "tasks": list(tasks)}))

    config = {
        "command": cat_file(data),
        "key": "tasks",
        "change-detection": {
            "strategy": "json-diff",
            "collection": {"path": "$.tasks", "key": "id", "ignore-paths": ["seen"]},
        },
    }
    write({"id": 1, "state": "open", "seen": 1}, {"id": "b", "state": "open"})
    baseline = observe(config)
    assert baseline.observations == []
    assert baseline.next_state["keyedSnapshot"] == {
        "1": {"id": 1, "state": "open"},
        "b": {"id": "b", "state": "open"},
    }

    # Reordering and ignored fields are not changes.
    write({"id": "b", "state": "open"}, {"id": 1, "state": "open", "seen": 2})
    assert observe(config, baseline.next_state).observations == []

    write({"id": 1, "state": "closed"}, {"id": 3, "state": "open"})
    result = observe(config, baseline.next_state)
    assert [(o.title, o.change_kind) for o in result.observations] == [
        ("Item changed: tasks#1", "modified"),
        ("Item added: tasks#3", "created"),
        ("Item removed: tasks#b", "descoped"),
    ]
    added = result.observations[1]
    assert added.object_key == "tasks#3"
    assert added.payload == {"command": config["command"], "key": "3", "changeKind": "created"}
    assert added.query_scope == {"command": "tasks", "objectKey": "tasks#3"}
    assert added.snapshot_text is None
    assert set(result.next_state["keyedSnapshot"]) == {"1", "3"}


def test_collection_output_that_is_not_json_is_an_error_not_a_health_signal(
    tmp_path: Path,
) -> None:
    config = {
        "command": [PY, "-c", "print('oops')"],
        "change-detection": {"strategy": "json-diff", "collection": {"path": "a", "key": "id"}},
    }
    with pytest.raises(ValueError, match="not JSON"):
        observe(config)
    config["command"] = [PY, "-c", "print('{\"a\": 1}')"]
    with pytest.raises(ValueError, match='collection path "a" must select an array'):
        observe(config)


# --------------------------------------------------------------------- exit-code


def test_exit_code_strategy_ignores_output_and_compares_the_status(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.write_text("0")
    config = {"command": exit_with_file(code), "change-detection": {"strategy": "exit-code"}}
    state = observe(config).next_state
    code.write_text("3")
    (changed,) = observe(config, state).observations
    assert changed.payload["exitCode"] == 3
    assert changed.payload["strategy"] == "exit-code"

    data = tmp_path / "data.txt"
    data.write_text("a")
    by_output = {"command": cat_file(data), "change-detection": {"strategy": "exit-code"}}
    before = observe(by_output).next_state
    data.write_text("b")
    assert observe(by_output, before).observations == []


def test_a_non_zero_exit_is_a_failure_unless_the_monitor_calls_it_ordinary(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data.txt"
    data.write_text("broken\n")
    failing = {"command": cat_file(data, exit_code=2)}
    first = observe(failing)
    (event,) = first.observations
    assert event.title.startswith("Command failing: ")
    assert event.payload["exitCode"] == 2
    assert event.payload["error"] == "exit status 2"
    assert "exit status 2" in (event.summary or "")
    assert event.detail == "The command failed: exit status 2. It wrote nothing to stderr."
    assert first.failure == "exit status 2"
    assert first.next_state["health"] == "failing"

    ordinary = {"command": cat_file(data, exit_code=2), "ok-exit-codes": [0, 2]}
    first = observe(ordinary)
    assert first.observations == []
    assert first.failure is None
    assert first.next_state["health"] == "ok"
    assert first.next_state["exitCode"] == 2
    data.write_text("still broken\n")
    (changed,) = observe(ordinary, first.next_state).observations
    assert changed.title.startswith("Command output changed: ")
    assert changed.payload["exitCode"] == 2


# --------------------------------------------------------------------- health


def test_a_command_that_cannot_start_fails_then_recovers(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    config = {"command": [str(tool)], "key": "tool"}
    failing = observe(config)
    (event,) = failing.observations
    assert event.title == "Command failing: tool"
    assert event.summary == f"{event.title} ({event.payload['error']})"
    assert event.change_kind == "modified"
    assert event.object_key == "tool"
    assert event.query_scope == {"command": "tool"}
    assert event.snapshot_text is None
    assert event.payload["command"] == [str(tool)]
    assert "ENOENT" in event.payload["error"]
    assert event.payload["stderrTail"] == ""
    assert failing.next_state == {
        "stdout": "",
        "exitCode": 0,
        "truncated": False,
        "health": "failing",
        "baselined": False,
    }

    # Still failing: no second event (edge-triggered), state kept.
    again = observe(config, failing.next_state)
    assert again.observations == []
    assert again.next_state == failing.next_state

    tool.write_text("#!/bin/sh\necho works\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    recovered = observe(config, again.next_state)
    (back,) = recovered.observations  # first success after a failing first run: no diff
    assert back.title == "Command recovered: tool"
    assert back.payload == {"command": [str(tool)]}
    assert back.change_kind == "modified"
    assert recovered.next_state["health"] == "ok"
    assert recovered.next_state["baselined"] is True
    assert recovered.next_state["stdout"] == "works\n"


def test_recovery_diffs_against_the_result_from_before_the_failure(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("before\n")
    script = (
        f"import os, signal, sys; t = open({str(data)!r}).read()\n"
        "if t == 'die':\n"
        "    sys.stderr.write('password=hunter22 went wrong\\n'); sys.stderr.flush()\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "sys.stdout.write(t)"
    )
    config = {"command": [PY, "-c", script], "key": "probe"}
    state = observe(config).next_state

    data.write_text("die")
    failing = observe(config, state)
    (event,) = failing.observations
    assert event.payload["error"] == "Command terminated by signal SIGTERM"
    assert "went wrong" in event.payload["stderrTail"]
    assert "hunter22" not in event.payload["stderrTail"]
    assert failing.next_state == {**state, "health": "failing"}

    data.write_text("after\n")
    result = observe(config, failing.next_state)
    assert [o.title for o in result.observations] == [
        "Command recovered: probe",
        "Command output changed: probe",
    ]
    assert result.observations[1].snapshot_text == "after\n"

    # Recovery with unchanged output reports only the recovery.
    data.write_text("die")
    failing = observe(config, result.next_state)
    data.write_text("after\n")
    assert [o.title for o in observe(config, failing.next_state).observations] == [
        "Command recovered: probe"
    ]


def test_a_failure_keeps_the_keyed_baseline(tmp_path: Path) -> None:
    data = tmp_path / "tasks.json"
    data.write_text('[{"id": 1}]')
    config = {
        "command": cat_file(data),
        "key": "t",
        "change-detection": {"strategy": "json-diff", "collection": {"path": "$", "key": "id"}},
    }
    state = observe(config).next_state
    failing = observe({**config, "command": [str(tmp_path / "missing")]}, state)
    assert failing.next_state["keyedSnapshot"] == {"1": {"id": 1}}
    data.write_text('[{"id": 1}, {"id": 2}]')
    result = observe(config, failing.next_state)
    assert [o.title for o in result.observations] == [
        "Command recovered: t",
        "Item added: t#2",
    ]


def test_env_reaches_the_command_but_is_never_stored(tmp_path: Path) -> None:
    script = (
        "import os, sys; v = os.environ['PROBE_SECRET']; print(os.environ['PROBE_PLAIN'])\n"
        "if os.environ.get('PROBE_FAIL'): sys.stderr.write('oops ' + v); os.abort()"
    )
    env = {"PROBE_SECRET": "s3cr3t-value", "PROBE_PLAIN": "visible"}
    result = observe({"command": [PY, "-c", script], "env": env})
    assert result.next_state["stdout"] == "visible\n"
    failing = observe({"command": [PY, "-c", script], "env": {**env, "PROBE_FAIL": "1"}})
    (event,) = failing.observations
    assert event.payload["error"] == "Command terminated by signal SIGABRT"
    assert "s3cr3t-value" not in json.dumps(event.to_json())
    assert "s3cr3t-value" not in json.dumps(failing.next_state)
    assert "oops" in event.payload["stderrTail"]


# --------------------------------------------------------------------- cwd


def test_cwd_defaults_to_the_workspace_and_resolves_relative_paths(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "sub" / "marker.txt").write_text("inside sub")
    (workspace / "marker.txt").write_text("at the root")
    argv = [PY, "-c", "import os; print(os.getcwd()); print(open('marker.txt').read())"]

    root = observe({"command": argv}, workspace=workspace).next_state["stdout"]
    assert root == f"{workspace}\nat the root\n"
    sub = observe({"command": argv, "cwd": "sub"}, workspace=workspace).next_state["stdout"]
    assert sub == f"{workspace / 'sub'}\ninside sub\n"
    absolute = observe({"command": argv, "cwd": str(workspace / "sub")}, workspace=tmp_path)
    assert absolute.next_state["stdout"] == sub

    # A missing folder is an execution failure, not an error.
    (event,) = observe({"command": argv, "cwd": "nope"}, workspace=workspace).observations
    assert event.title.startswith("Command failing: ")
    assert str(workspace / "nope") in event.payload["error"]


def test_resolve_cwd_without_a_workspace_uses_the_daemon_folder() -> None:
    assert resolve_cwd(None, None) is None
    assert resolve_cwd("rel", None) == "rel"
    assert resolve_cwd("rel", "/ws") == "/ws/rel"
    assert resolve_cwd("/abs", "/ws") == "/abs"
    assert resolve_cwd(None, "/ws") == "/ws"


# --------------------------------------------------------------------- timeouts, caps


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    # The grandchild holds stdout open; without the group kill the run would hang.
    script = f"echo started; sleep 30 & echo $! > {pid_file}; wait"
    started = time.monotonic()
    result = observe({"command": ["sh", "-c", script], "timeout": "1s"})
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 3.0
    (event,) = result.observations
    assert event.payload["error"] == "Command timed out after 1000ms"
    assert result.next_state["health"] == "failing"
    assert gone(read_pid(pid_file))


STUBBORN = (
    "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "open({pid_file!r}, 'w').write(str(os.getpid())); time.sleep(30)"
)


@pytest.mark.slow
def test_a_grandchild_ignoring_sigterm_is_dead_when_the_run_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command_exec, "SIGKILL_GRACE_S", 0.5)
    pid_file = tmp_path / "stubborn.pid"
    # The shell exits on SIGTERM at once; only its child ignores it.
    script = f"'{PY}' -c \"{STUBBORN.format(pid_file=str(pid_file))}\" & wait"
    outcome = asyncio.run(
        run_command(["sh", "-c", script], cwd=None, env=None, timeout_ms=1000, permit=TRUSTED)
    )
    assert isinstance(outcome, CommandFailure)
    assert outcome.error == "Command timed out after 1000ms"
    # Not "soon after": nothing the run started may outlive it.
    assert gone(read_pid(pid_file), within_s=0)


@pytest.mark.slow
def test_a_background_job_left_by_a_command_that_exited_is_ended_with_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command_exec, "SIGKILL_GRACE_S", 0.5)
    pid_file = tmp_path / "stubborn.pid"
    script = (
        f"'{PY}' -c \"{STUBBORN.format(pid_file=str(pid_file))}\" >/dev/null 2>&1 & "
        f"while [ ! -s '{pid_file}' ]; do sleep 0.05; done; echo done"
    )
    result = observe({"command": ["sh", "-c", script], "timeout": "1m"})
    assert result.next_state["stdout"] == "done\n"
    assert gone(read_pid(pid_file), within_s=0)


@pytest.mark.slow
def test_daemon_once_leaves_no_term_ignoring_grandchild_behind(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    monitor = workspace / ".claude" / "monitors" / "slow"
    monitor.mkdir(parents=True)
    (workspace / ".claude" / "agentmonitors.local.md").write_text("---\nenabled: true\n---\n")
    pid_file = tmp_path / "stubborn.pid"
    script = f"'{PY}' -c \"{STUBBORN.format(pid_file=str(pid_file))}\" & wait"
    (monitor / "MONITOR.md").write_text(
        "---\nname: Slow\nwatch:\n  type: command-poll\n"
        f"  command: {json.dumps(['sh', '-c', script])}\n  timeout: 1s\n---\nBody.\n"
    )
    env = {**os.environ, "AGENTMONITORS_DB": str(tmp_path / "inbox.db")}
    # A project command runs once the user approved it, as they would.
    approve = [PY, "-m", "agentmonitors", "monitor", "approve", "--yes", "slow"]
    approve += ["--workspace", str(workspace)]
    subprocess.run(approve, cwd=workspace, env=env, timeout=60, check=True)
    once = subprocess.run(
        [
            PY,
            "-m",
            "agentmonitors",
            "daemon",
            "once",
            "--workspace",
            str(workspace),
            "--format",
            "json",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # The run timed out: the monitor is failing, so the tick exits 1 naming it.
    assert once.returncode == 1, once.stderr
    assert once.stderr.startswith("error: 1 monitor(s) failing: slow ")
    assert json.loads(once.stdout)["evaluatedMonitors"] == ["slow"]
    # The grace is the default 5 s: a timer would still be pending when `once` exits.
    assert gone(read_pid(pid_file), within_s=0)


@pytest.mark.slow
def test_a_descendant_holding_the_pipes_after_exit_does_not_hang_the_run(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "lingering.pid"
    script = f"echo done; sleep 30 & echo $! > {pid_file}"
    started = time.monotonic()
    result = observe({"command": ["sh", "-c", script], "timeout": "1m"})
    elapsed = time.monotonic() - started
    assert result.next_state["stdout"] == "done\n"
    assert result.next_state["health"] == "ok"
    assert 1.5 < elapsed < 4.0  # the close grace, not the 30 s sleep
    assert gone(read_pid(pid_file), within_s=0)


def test_huge_output_is_drained_and_capped_without_deadlock() -> None:
    script = (
        "import sys\n"
        "for _ in range(80):\n"
        "    sys.stdout.write('o' * 65536); sys.stderr.write('e' * 65536)\n"
        "sys.stdout.write('END'); sys.stderr.write('\\u00e9' * 3000 + 'TAIL')\n"
        "sys.exit(7)"
    )
    started = time.monotonic()
    result = observe({"command": [PY, "-c", script], "timeout": "10s", "ok-exit-codes": [7]})
    assert time.monotonic() - started < 5
    state = result.next_state
    assert state["exitCode"] == 7  # ran to its real end
    assert state["truncated"] is True
    assert len(state["stdout"].encode()) == STDOUT_CAP_BYTES
    assert state["stdout"] == "o" * STDOUT_CAP_BYTES

    dying = script.replace("sys.exit(7)", "import os, signal; os.kill(os.getpid(), 9)")
    (event,) = observe({"command": [PY, "-c", dying], "timeout": "10s"}).observations
    tail = event.payload["stderrTail"]
    assert event.payload["error"] == "Command terminated by signal SIGKILL"
    assert len(tail) == 2000
    assert tail == "\u00e9" * 1996 + "TAIL"


def test_stdout_cap_never_splits_a_character() -> None:
    # 'é' is two bytes; an odd number of ASCII bytes first puts the cap mid-character.
    script = "import sys; sys.stdout.write('x' + '\\u00e9' * 600000)"
    state = observe({"command": [PY, "-c", script]}).next_state
    assert state["truncated"] is True
    assert "\ufffd" not in state["stdout"]
    assert len(state["stdout"].encode()) == STDOUT_CAP_BYTES - 1


def test_cancelling_observe_kills_the_command(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = f"sleep 30 & echo $! > {pid_file}; wait"

    async def cancel_midway() -> None:
        task = asyncio.create_task(
            run_command(["sh", "-c", script], cwd=None, env=None, timeout_ms=60_000, permit=TRUSTED)
        )
        read = await asyncio.to_thread(read_pid, pid_file)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(gone, read)

    asyncio.run(cancel_midway())


# --------------------------------------------------------------------- end to end


def test_init_then_real_ticks_report_a_changed_command(
    run_cli: Callable[..., CliResult], isolated_environment: Path, tmp_path: Path
) -> None:
    workspace = isolated_environment
    (workspace / "status.txt").write_text("green\n")
    argv = [PY, "-c", "print(open('status.txt').read().strip())"]
    created = run_cli(
        "init",
        "x",
        "--yes",
        "--type",
        "command-poll",
        *(arg for a in argv for arg in ("--command", a)),
    )
    assert created.code == 0, created.err
    assert (workspace / ".claude" / "monitors" / "x" / "MONITOR.md").is_file()

    clock = ManualClock(START)
    db = Database(str(tmp_path / "data" / "inbox.db"))
    try:
        runtime = Runtime(db, str(workspace), bundled_registry(), clock=clock)
        first = asyncio.run(runtime.tick(()))
        assert first.evaluated_monitors == ["x"]
        assert first.emitted_event_ids == []
        assert not first.errored_observations

        (workspace / "status.txt").write_text("red\n")
        clock.advance(5 * 60_000)
        second = asyncio.run(runtime.tick(()))
        assert len(second.emitted_event_ids) == 1
        with db.read() as conn:
            (event,) = [dict(row) for row in conn.execute("SELECT * FROM monitor_events")]
            (state,) = [dict(row) for row in conn.execute("SELECT * FROM monitor_state")]
        assert event["object_key"] == " ".join(argv)
        assert event["summary"].startswith("Command output changed: ")
        assert json.loads(event["query_scope"]) == {
            "command": " ".join(argv),
            "changeKind": "modified",
        }
        assert json.loads(state["source_state"])["stdout"] == "red\n"
    finally:
        db.close()

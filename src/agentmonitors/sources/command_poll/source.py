"""command-poll: a command's output or exit code, run without a shell.

Each ``observe`` runs the command once (see :mod:`command_exec`) and
compares the result with the last *successful* one kept in ``next_state``. A run that
cannot start, times out or dies of a foreign signal is a health signal, not an error:
the stored result is kept, ``health`` turns ``failing`` and ``Command failing: <key>``
is emitted on the ok→failing edge only; the next success emits ``Command recovered:
<key>`` and then, if the output differs from the pre-failure result, the change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from agentmonitors.fastpath.lean_dataclass import dataclass, replace
from agentmonitors.monitor.durations import duration_ms
from agentmonitors.sources import plain_config as plain
from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.collections_diff import (
    canonical_json,
    collection_items,
    collection_observations,
    display_object_key,
)
from agentmonitors.sources.command_poll.approval import approval_of, resolve_cwd
from agentmonitors.sources.command_poll.outcome import (
    FAILURE_DETAIL_CHARS,
    STDERR_TAIL_CHARS,
    CommandFailure,
    CommandResult,
)
from agentmonitors.sources.command_poll.plain import (
    CommandChangeDetectionSettings,
    CommandPollSettings,
    plain_config,
)
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.sources.redact import redact_text
from agentmonitors.sources.traits import Approval, Scaffold, ScaffoldSeed, quoted_list

SCAFFOLD_DEFAULT_COMMAND = ("git", "ls-remote", "origin", "refs/heads/main")


def ordinary_exit(settings: CommandPollSettings, strategy: str, code: int) -> bool:
    """Whether ``code`` is an ordinary result of this monitor rather than a failure.

    Under the exit-code strategy the code is what is watched, so every code is.
    """
    if strategy == "exit-code":
        return True
    return code in (settings.ok_exit_codes or (0,))


class CommandPollSource(ModelSource):
    name = "command-poll"
    description = "Runs a command on an interval and reports when its output or exit code changes."
    stateful = True
    # A process per run: once a second at most (a test of a file, a cheap status).
    min_interval_ms = 1_000
    config_model_ref = "agentmonitors.sources.command_poll.config:CommandPollConfig"
    scaffold_seeds: ClassVar[Mapping[str, str]] = {"command": "command"}

    def scaffold(self, seed: ScaffoldSeed) -> Scaffold:
        argv = list(seed.command) if seed.command else list(SCAFFOLD_DEFAULT_COMMAND)
        explain = (
            "  # An argv list, run directly without a shell. This example asks the remote for\n"
            "  # the current tip of main, so it sees pushes without a prior fetch.\n"
            if not seed.command
            else "  # An argv list, run directly without a shell.\n"
        )
        return Scaffold(
            watch=(
                f"{explain}  # For pipes or globbing, run a shell yourself:"
                " ['sh', '-c', 'a | b'].\n"
                f"  command:\n{quoted_list(argv)}\n"
                "  interval: 5m\n"
                "  change-detection:\n"
                "    # text-diff compares stdout, json-diff compares it as JSON, exit-code\n"
                "    # compares only the exit status.\n"
                "    strategy: text-diff\n"
            ),
            body=(
                "The command's output changed. Review what is new and decide whether it affects\n"
                "this workspace.\n"
            ),
        )

    def baseline_summary(self, state: Any) -> str | None:
        """``  Exit code <n> (<bytes> bytes of output)``, so a command that fails shows."""
        if not isinstance(state, dict) or state.get("health") != "ok":
            return None
        code = state.get("exitCode")
        stdout = state.get("stdout")
        if not isinstance(code, int) or isinstance(code, bool) or not isinstance(stdout, str):
            return None
        size = len(stdout.encode("utf-8"))
        note = " (output truncated)" if state.get("truncated") is True else ""
        return f"  Exit code {code} ({size} bytes of output){note}"

    def approval(self, config: Mapping[str, Any], workspace: str) -> Approval:
        return approval_of(self.observed_config(config, plain_config), workspace)

    def config_warnings(self, config: Mapping[str, Any]) -> list[str]:
        warnings = []
        detection = config.get("change-detection")
        if (
            "ok-exit-codes" in config
            and isinstance(detection, Mapping)
            and detection.get("strategy") == "exit-code"
        ):
            warnings.append(
                "watch.ok-exit-codes has no effect with change-detection.strategy: exit-code,"
                " which watches the exit code itself: every code is an ordinary result there"
            )
        return warnings + self._scaffold_warning(config)

    def _scaffold_warning(self, config: Mapping[str, Any]) -> list[str]:
        if tuple(config.get("command") or ()) == SCAFFOLD_DEFAULT_COMMAND:
            return [
                "watch.command is still the example from 'init --type command-poll' ("
                + " ".join(SCAFFOLD_DEFAULT_COMMAND)
                + ") — replace it with the command this monitor should run, or keep it if "
                "polling the upstream main branch is what you want"
            ]
        return []

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        """Run the command once; report a failure, a recovery, and a change of its
        output (or of the collection its JSON output holds)."""
        parsed = self.observed_config(config, plain_config)
        detection = parsed.change_detection or CommandChangeDetectionSettings()
        object_key = parsed.key or " ".join(parsed.command)
        previous = _previous_state(context.previous_state)
        outcome = await _run_once(parsed, context)
        if isinstance(outcome, CommandFailure):
            return _failing(parsed, object_key, previous, outcome.error, outcome)
        if not ordinary_exit(parsed, detection.strategy, outcome.exit_code):
            return _failing(
                parsed, object_key, previous, f"exit status {outcome.exit_code}", outcome
            )
        run = _Run(parsed, detection, object_key, previous, outcome)
        if detection.collection is not None:
            return _collection_changes(run, detection.collection)
        return _output_changes(run)


async def _run_once(
    parsed: CommandPollSettings, context: ObservationContext
) -> CommandResult | CommandFailure:
    """The command's one run of this observation, under the monitor's permit."""
    # Lazy: the runner's subprocess and selectors are a tenth of `validate`, which loads
    # this source for its approval and never runs a command.
    from agentmonitors.sources.command_poll.command_exec import run_command

    return await run_command(
        parsed.command,
        cwd=resolve_cwd(parsed.cwd, context.workspace_path),
        env=_run_env(parsed.env, context.now_ms),
        timeout_ms=duration_ms(parsed.timeout),
        permit=context.permit,
    )


@dataclass(frozen=True)
class _Run:
    """A run that exited with an ordinary code, and what it is compared with."""

    parsed: CommandPollSettings
    detection: CommandChangeDetectionSettings
    object_key: str
    previous: dict[str, Any] | None
    outcome: CommandResult

    @property
    def shown(self) -> str:
        return display_object_key(self.object_key)

    @property
    def baselined(self) -> bool:
        return self.previous is not None and self.previous["baselined"] is True

    def recovered(self) -> list[Observation]:
        """``Command recovered`` when the run before this one failed."""
        if self.previous is None or self.previous["health"] != "failing":
            return []
        payload = {"command": list(self.parsed.command)}
        return [_health(f"Command recovered: {self.shown}", self.object_key, payload)]

    def ok_state(self) -> dict[str, Any]:
        """The state a successful run leaves: its output, kept for the next compare."""
        return {
            "stdout": self.outcome.stdout,
            "exitCode": self.outcome.exit_code,
            "truncated": self.outcome.truncated,
            "health": "ok",
            "baselined": True,
        }


def _collection_changes(run: _Run, collection: plain.CollectionSettings) -> ObservationResult:
    """The items of the JSON output's collection that were added, changed or removed."""
    try:
        document = json.loads(run.outcome.stdout, parse_constant=_reject_constant)
    except ValueError as error:
        raise ValueError(
            f"command-poll output of {run.shown} is not JSON, so change-detection."
            f"collection cannot read it: {error}"
        ) from None
    items = collection_items(document, collection)
    prior = (
        run.previous.get("keyedSnapshot") if run.previous is not None and run.baselined else None
    )
    observations = run.recovered()
    observations.extend(
        collection_observations(
            prior if isinstance(prior, Mapping) else None,
            items,
            scope_key=run.object_key,
            payload={"command": list(run.parsed.command)},
            query_scope={"command": run.object_key},
        )
    )
    state = run.ok_state()
    state["keyedSnapshot"] = items
    return ObservationResult(observations=observations, next_state=state)


def _output_changes(run: _Run) -> ObservationResult:
    """``Command output changed`` when the output (or exit code) differs from the last
    good run's; on the first run, the baseline the first change is diffed against."""
    outcome, detection = run.outcome, run.detection
    # What a change's snapshot records of a run, and a baseline's the same way.
    snapshot = {
        "command": list(run.parsed.command),
        "exitCode": outcome.exit_code,
        "stdoutLength": len(outcome.stdout),
        "strategy": detection.strategy,
    }
    observations = run.recovered()
    if (
        run.previous is not None
        and run.baselined
        and _changed(detection.strategy, detection.ignore_paths or [], run.previous, outcome)
    ):
        title = f"Command output changed: {run.shown}"
        observations.append(
            Observation(
                title=title,
                summary=title,
                payload={
                    "command": list(run.parsed.command),
                    "exitCode": outcome.exit_code,
                    "strategy": detection.strategy,
                    "stdout": outcome.stdout,
                    "truncated": outcome.truncated,
                },
                snapshot_text=outcome.stdout,
                snapshot=snapshot,
                object_key=run.object_key,
                query_scope={"command": run.object_key},
                change_kind="modified",
            )
        )
    baselines = []
    if not run.baselined:
        # The output this first run saw, kept as the snapshot the first change is
        # diffed against (bounded as a change's output is).
        baselines.append(
            Observation(
                title=f"Baseline: {run.shown}",
                snapshot_text=outcome.stdout,
                snapshot=snapshot,
                object_key=run.object_key,
            )
        )
    return ObservationResult(
        observations=observations, next_state=run.ok_state(), baselines=baselines
    )


def _failing(
    parsed: CommandPollSettings,
    object_key: str,
    previous: dict[str, Any] | None,
    error: str,
    outcome: CommandResult | CommandFailure,
) -> ObservationResult:
    """A run that failed: the last good result is kept, the health turns ``failing``.

    ``Command failing`` is emitted on the ok→failing edge only; every failing run is
    reported to the runtime (``failure``), which records it and backs off.
    """
    # Values handed to the command through env are never stored, even when it echoes
    # them to stderr.
    secrets = list((parsed.env or {}).values())
    reason = redact_text(error, secrets)
    stderr = redact_text(outcome.stderr_tail, secrets)
    state: dict[str, Any] = {
        "stdout": previous["stdout"] if previous else "",
        "exitCode": previous["exitCode"] if previous else 0,
        "truncated": previous["truncated"] if previous else False,
        "health": "failing",
        "baselined": previous["baselined"] if previous else False,
    }
    if previous is not None and isinstance(previous.get("keyedSnapshot"), Mapping):
        state["keyedSnapshot"] = previous["keyedSnapshot"]
    observations = []
    if previous is None or previous["health"] != "failing":
        shown = display_object_key(object_key)
        payload: dict[str, Any] = {
            "command": list(parsed.command),
            "error": reason,
            "stderrTail": stderr[-STDERR_TAIL_CHARS:],
        }
        if isinstance(outcome, CommandResult):
            payload["exitCode"] = outcome.exit_code
        title = f"Command failing: {shown}"
        observations.append(
            replace(
                _health(title, object_key, payload),
                summary=f"{title} ({reason})",
                detail=failure_detail(reason, stderr),
            )
        )
    last_stderr = _last_line(stderr)
    why = f"{reason}: {last_stderr}" if last_stderr else reason
    return ObservationResult(observations=observations, next_state=state, failure=why)


def failure_detail(reason: str, stderr: str) -> str:
    """Why a run failed, as the delivered block shows it: the reason and the last lines
    of stderr, within :data:`FAILURE_DETAIL_CHARS` (a diff's cap, docs/architecture.md
    "Text and sizes"), saying how much of stderr was left out."""
    head = f"The command failed: {reason}."
    text = stderr.rstrip("\n")
    if not text.strip():
        return head + " It wrote nothing to stderr."
    head += " The last lines of its stderr:\n"
    room = FAILURE_DETAIL_CHARS - len(head)
    if len(text) <= room:
        return head + text
    # Room for the marker's line, its count at most as long as the text's length.
    kept = text[-(room - len(_cut_marker(len(text)))) :]
    newline = kept.find("\n")
    if 0 <= newline < len(kept) - 1:  # start on a whole line when one begins in it
        kept = kept[newline + 1 :]
    return head + _cut_marker(len(text) - len(kept)) + kept


def _cut_marker(left_out: int) -> str:
    return f"(… {left_out} earlier characters of stderr left out)\n"


def _last_line(text: str) -> str:
    """The line of stderr that best says why, for one-line listings: the first that
    names an error (``fatal: ...``, ``error: ...``; the root cause usually comes
    first), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    marked = [line for line in lines if _ERROR_WORDS.search(line)]
    return (marked[0] if marked else lines[-1])[:200]


_ERROR_WORDS = re.compile(r"\b(fatal|error|failed|cannot|denied|not found)\b", re.IGNORECASE)


# The observation's time, in whole seconds since the epoch, for a command whose output
# depends on "now" (the PR presets' 6-hour window): it follows the runtime's clock,
# which tests drive. An authored ``env`` of the same name wins.
NOW_VARIABLE = "AGENTMONITORS_NOW"


def _run_env(authored: Mapping[str, str] | None, now_ms: int) -> dict[str, str]:
    return {NOW_VARIABLE: str(now_ms // 1000), **(authored or {})}


def _health(title: str, object_key: str, payload: dict[str, Any]) -> Observation:
    return Observation(
        title=title,
        summary=title,
        payload=payload,
        object_key=object_key,
        query_scope={"command": object_key},
        change_kind="modified",
    )


def _previous_state(state: Any) -> dict[str, Any] | None:
    """The stored state, or None unless all five typed fields are present and valid."""
    if not isinstance(state, Mapping):
        return None
    exit_code = state.get("exitCode")
    if (
        not isinstance(state.get("stdout"), str)
        or isinstance(exit_code, bool)
        or not isinstance(exit_code, int | float)
        or not isinstance(state.get("truncated"), bool)
        or state.get("health") not in ("ok", "failing")
        or not isinstance(state.get("baselined"), bool)
    ):
        return None
    return dict(state)


def _changed(
    strategy: str, ignore_paths: list[str], previous: Mapping[str, Any], current: CommandResult
) -> bool:
    if strategy == "exit-code":
        return bool(previous["exitCode"] != current.exit_code)
    if strategy == "json-diff":
        before = _canonical_json(previous["stdout"], ignore_paths)
        after = _canonical_json(current.stdout, ignore_paths)
        if before is not None and after is not None:
            return before != after
    return bool(previous["stdout"] != current.stdout)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _canonical_json(text: str, ignore_paths: list[str]) -> str | None:
    """A key-sorted compact rendering of ``text`` minus ``ignore_paths``; None if not JSON."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return None
    for path in ignore_paths:
        _remove_path(value, path)
    return canonical_json(value)


def _remove_path(value: Any, path: str) -> None:
    """Delete ``$.a.b`` / ``a.b`` from ``value`` in place; a missing key is a no-op."""
    body = path[2:] if path.startswith("$.") else path
    if body in ("", "$"):
        return
    *parents, last = body.split(".")
    for segment in parents:
        if not isinstance(value, dict) or segment not in value:
            return
        value = value[segment]
    if isinstance(value, dict):
        value.pop(last, None)

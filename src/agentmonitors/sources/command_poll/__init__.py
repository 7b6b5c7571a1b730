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
import os
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
from agentmonitors.sources.command_poll.command_exec import (
    FAILURE_DETAIL_CHARS,
    STDERR_TAIL_CHARS,
    CommandFailure,
    CommandResult,
    run_command,
)
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.sources.reach import command_approval
from agentmonitors.sources.redact import redact_text
from agentmonitors.sources.traits import Approval, Scaffold, ScaffoldSeed, quoted_list

SCAFFOLD_DEFAULT_COMMAND = ("git", "ls-remote", "origin", "refs/heads/main")
STRATEGIES = ("text-diff", "json-diff", "exit-code")


@dataclass(frozen=True)
class CommandChangeDetectionSettings:
    strategy: str = "text-diff"
    ignore_paths: list[str] | None = None
    collection: plain.CollectionSettings | None = None


@dataclass(frozen=True)
class CommandPollSettings:
    """A validated watch block as observing reads it (the model's values, standard library)."""

    command: list[str]
    cwd: str | None
    env: dict[str, str] | None
    timeout: str
    key: str | None
    interval: str
    change_detection: CommandChangeDetectionSettings | None
    # None: only 0 is ordinary (every code is, under the exit-code strategy).
    ok_exit_codes: tuple[int, ...] | None = None


def _argv(value: Any) -> list[str]:
    argv = plain.texts(value)
    if not argv:
        raise plain.Unexpected
    return argv


def _ok_exit_codes(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    if type(value) is not list or not value:
        raise plain.Unexpected
    if not all(type(code) is int and 0 <= code <= 255 for code in value):
        raise plain.Unexpected
    return tuple(value)


def _change_detection(value: Any) -> CommandChangeDetectionSettings | None:
    if value is None:
        return None
    config = plain.block(value, ("strategy", "ignore-paths", "collection"))
    strategy = plain.absent_as(config, "strategy", "text-diff", plain.one_of(*STRATEGIES))
    ignore_paths = config.get("ignore-paths")
    collection = config.get("collection")
    if (ignore_paths is not None or collection is not None) and strategy != "json-diff":
        raise plain.Unexpected
    return CommandChangeDetectionSettings(
        strategy=strategy,
        ignore_paths=None if ignore_paths is None else plain.ignore_paths(ignore_paths),
        collection=None if collection is None else plain.collection(collection, closed=True),
    )


def plain_config(config: Mapping[str, Any]) -> CommandPollSettings:
    """``config`` read without its model; ``Unexpected`` for anything unsure."""
    config = plain.block(config)
    if "command" not in config or "change_detection" in config or "ok_exit_codes" in config:
        raise plain.Unexpected
    return CommandPollSettings(
        command=_argv(config["command"]),
        cwd=plain.absent_as(config, "cwd", None, plain.optional_text),
        env=plain.absent_as(config, "env", None, plain.optional_string_map),
        timeout=plain.absent_as(config, "timeout", "30s", plain.timeout),
        key=plain.absent_as(config, "key", None, plain.optional_text),
        interval=plain.absent_as(config, "interval", "30s", plain.duration),
        change_detection=plain.absent_as(config, "change-detection", None, _change_detection),
        ok_exit_codes=plain.absent_as(config, "ok-exit-codes", None, _ok_exit_codes),
    )


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
        parsed = self.observed_config(config, plain_config)
        return command_approval(
            parsed.command, parsed.cwd, parsed.env, resolve_cwd(parsed.cwd, workspace)
        )

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
        parsed = self.observed_config(config, plain_config)
        detection = parsed.change_detection or CommandChangeDetectionSettings()
        object_key = parsed.key or " ".join(parsed.command)
        previous = _previous_state(context.previous_state)
        outcome = await run_command(
            parsed.command,
            cwd=resolve_cwd(parsed.cwd, context.workspace_path),
            env=_run_env(parsed.env, context.now_ms),
            timeout_ms=duration_ms(parsed.timeout),
            permit=context.permit,
        )
        shown = display_object_key(object_key)
        extra = {"command": object_key}

        if isinstance(outcome, CommandResult) and not ordinary_exit(
            parsed, detection.strategy, outcome.exit_code
        ):
            return _failing(
                parsed, object_key, previous, f"exit status {outcome.exit_code}", outcome
            )
        if isinstance(outcome, CommandFailure):
            return _failing(parsed, object_key, previous, outcome.error, outcome)

        assert isinstance(outcome, CommandResult)
        observations = []
        if previous is not None and previous["health"] == "failing":
            observations.append(
                _health(
                    f"Command recovered: {shown}", object_key, {"command": list(parsed.command)}
                )
            )
        baselined = previous is not None and previous["baselined"] is True
        state = {
            "stdout": outcome.stdout,
            "exitCode": outcome.exit_code,
            "truncated": outcome.truncated,
            "health": "ok",
            "baselined": True,
        }
        collection = detection.collection
        if collection is not None:
            try:
                document = json.loads(outcome.stdout, parse_constant=_reject_constant)
            except ValueError as error:
                raise ValueError(
                    f"command-poll output of {shown} is not JSON, so change-detection."
                    f"collection cannot read it: {error}"
                ) from None
            items = collection_items(document, collection)
            prior = previous.get("keyedSnapshot") if previous is not None and baselined else None
            observations.extend(
                collection_observations(
                    prior if isinstance(prior, Mapping) else None,
                    items,
                    scope_key=object_key,
                    payload={"command": list(parsed.command)},
                    query_scope=extra,
                )
            )
            state["keyedSnapshot"] = items
            return ObservationResult(observations=observations, next_state=state)

        # What a change's snapshot records of a run, and a baseline's the same way.
        snapshot = {
            "command": list(parsed.command),
            "exitCode": outcome.exit_code,
            "stdoutLength": len(outcome.stdout),
            "strategy": detection.strategy,
        }
        if (
            previous is not None
            and baselined
            and _changed(detection.strategy, detection.ignore_paths or [], previous, outcome)
        ):
            title = f"Command output changed: {shown}"
            observations.append(
                Observation(
                    title=title,
                    summary=title,
                    payload={
                        "command": list(parsed.command),
                        "exitCode": outcome.exit_code,
                        "strategy": detection.strategy,
                        "stdout": outcome.stdout,
                        "truncated": outcome.truncated,
                    },
                    snapshot_text=outcome.stdout,
                    snapshot=snapshot,
                    object_key=object_key,
                    query_scope=extra,
                    change_kind="modified",
                )
            )
        baselines = []
        if not baselined:
            # The output this first run saw, kept as the snapshot the first change is
            # diffed against (bounded as a change's output is).
            baselines.append(
                Observation(
                    title=f"Baseline: {shown}",
                    snapshot_text=outcome.stdout,
                    snapshot=snapshot,
                    object_key=object_key,
                )
            )
        return ObservationResult(observations=observations, next_state=state, baselines=baselines)


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


def resolve_cwd(cwd: str | None, workspace_path: str | None) -> str | None:
    """The child's working folder (``cwd``); None means the daemon's own."""
    if cwd is None or cwd == "":
        return workspace_path or None
    if os.path.isabs(cwd) or not workspace_path:
        return cwd
    return os.path.normpath(os.path.join(workspace_path, cwd))


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

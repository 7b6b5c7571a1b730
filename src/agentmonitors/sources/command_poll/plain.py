"""command-poll's watch block as observing reads it, with the standard library.

The pydantic model in ``command_poll/config.py`` validates and describes the block;
this module reads a validated block into :class:`CommandPollSettings` without it (see
``sources/plain_config.py``), so a tick never loads pydantic.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources import plain_config as plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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

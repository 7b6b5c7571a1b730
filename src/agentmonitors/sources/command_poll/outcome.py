"""What one command-poll run gives: its result or its failure, and the caps on both.

Apart from the runner (``command_exec.py``) so the source loads without subprocess and
selectors: ``validate`` loads the source to ask its approval and never runs a command.
"""

from __future__ import annotations

from agentmonitors.fastpath.lean_dataclass import dataclass

STDOUT_CAP_BYTES = 1_048_576
STDERR_RETAINED_BYTES = 8_000
STDERR_TAIL_CHARS = 2_000
# What a delivered failure shows of its reason and stderr: a diff's cap (MAX_EVENT_DIFF,
# docs/architecture.md "Text and sizes"), so a failing command's block is sized like a
# changed one's.
FAILURE_DETAIL_CHARS = 800


@dataclass(frozen=True)
class CommandResult:
    """The command ran to completion with ``exit_code``; whether that code is a failure
    is the monitor's to say (command-poll's ``ok-exit-codes``).

    ``stderr_tail`` is raw, as :class:`CommandFailure`'s is: the caller redacts it.
    """

    stdout: str
    exit_code: int
    truncated: bool
    stderr_tail: str = ""


@dataclass(frozen=True)
class CommandFailure:
    """The command produced no usable result: spawn error, timeout or foreign signal.

    ``stderr_tail`` is the decoded retained tail of stderr (at most
    :data:`STDERR_RETAINED_BYTES` bytes), raw: the caller redacts it and only then cuts
    it to :data:`STDERR_TAIL_CHARS`, so a secret straddling the cut is still found.
    """

    error: str
    stderr_tail: str


CommandOutcome = CommandResult | CommandFailure

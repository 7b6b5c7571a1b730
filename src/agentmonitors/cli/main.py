"""The ``agentmonitors`` entry point.

The hook commands (``hook deliver``, ``hook rewake``, ``session start``, ``session
end``) run on every prompt and tool call, so they are dispatched here before click,
pydantic or any other heavy module is imported. So are ``--version`` and the commands an agent runs
between turns (``events list``, ``events ack``, ``session list``), ``daemon once`` and
``validate``, when their arguments are plain; everything else, and anything those cannot parse, goes
to the click application.
"""

from __future__ import annotations

import gc
import sys

from agentmonitors import __version__

_FAST = {
    ("hook", "deliver"): ("agentmonitors.transports.deliver", "run_hook_deliver"),
    ("hook", "rewake"): ("agentmonitors.transports.rewake", "run_hook_rewake"),
    ("session", "start"): ("agentmonitors.transports.session_hooks", "run_session_start"),
    ("session", "end"): ("agentmonitors.transports.session_hooks", "run_session_end"),
}
_AGENT = {("events", "list"), ("events", "ack"), ("session", "list")}


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` None means this process is the command (its entry point)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args[:1] == ["validate"]:
        # Editors and pre-commit start it on every save: the collector's passes over
        # the modules it loads free nothing (what a check makes lives until it prints)
        # and cost it about 3% of its time.
        gc.disable()
    try:
        return _dispatch(args)
    finally:
        if argv is None:
            # The process ends when this returns. Freezing what it holds spares the
            # interpreter's final garbage collection over every object the command
            # loaded (a few milliseconds of each short command; docs/architecture.md,
            # "Speed"); objects still go as their last reference does.
            gc.freeze()


def _dispatch(args: list[str]) -> int:
    if args == ["--version"]:
        print(__version__)
        return 0
    command = (args[0], args[1]) if len(args) >= 2 else None
    target = _FAST.get(command) if command is not None else None
    if target is not None and not ({"--help", "-h"} & set(args[2:])):
        # The builtin, not importlib.import_module: importlib costs a hook ~0.5 ms.
        run_hook = getattr(__import__(target[0], fromlist=[target[1]]), target[1])
        code: int = run_hook(args[2:])
        return code
    if command in _AGENT:
        # Lazy: each fast command loads only its own module, and the rest only click.
        from agentmonitors.cli.quick_commands import run_quick

        quick = run_quick(command, args[2:])
        if quick is not None:
            return quick
    if command == ("daemon", "once"):
        # A scheduler may run it every few seconds over a large tree: click alone
        # would be a fifth of a plain run.
        # Lazy: the tick's modules are this command's alone.
        from agentmonitors.cli.tick_once import run_quick as run_once_quick

        once = run_once_quick(args[2:])
        if once is not None:
            return once
    if args[:1] == ["validate"]:
        # Editors and pre-commit hooks run it on every save: click would be a third of it.
        # Lazy: validation's modules are this command's alone.
        from agentmonitors.cli.validate_run import run_quick as run_validate_quick

        validated = run_validate_quick(args[1:])
        if validated is not None:
            return validated
    # Lazy: click and every command's module load only when no fast path answered.
    from agentmonitors.cli.app import run

    return run(args)

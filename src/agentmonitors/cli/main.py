"""The ``agentmonitors`` entry point.

The hook commands (``hook deliver``, ``session start``, ``session end``) run on every
prompt and tool call, so they are dispatched here before click, pydantic or any
other heavy module is imported. Everything else goes to the click application.
"""

from __future__ import annotations

import sys

_FAST = {
    ("hook", "deliver"): ("agentmonitors.transports.deliver", "run_hook_deliver"),
    ("session", "start"): ("agentmonitors.transports.session_hooks", "run_session_start"),
    ("session", "end"): ("agentmonitors.transports.session_hooks", "run_session_end"),
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    target = _FAST.get((args[0], args[1])) if len(args) >= 2 else None
    if target is not None and not ({"--help", "-h"} & set(args[2:])):
        from importlib import import_module

        command = getattr(import_module(target[0]), target[1])
        code: int = command(args[2:])
        return code
    from agentmonitors.cli.app import run

    return run(args)

"""``python -m agentmonitors``: the same entry point as the console script."""

import os
import sys


def _forget_working_directory() -> None:
    """Take the current folder off the front of ``sys.path``, where ``python -m`` put it.

    Run in a project, it would let the project's own ``filelock.py`` or ``click/``
    stand in for a module imported later (docs/architecture.md, "Processes we start";
    ``-P`` does the same for the processes we start). A checkout run from its own
    ``src`` folder, where this package was found, keeps it.
    """
    if not sys.path:
        return
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return
    first = os.path.realpath(sys.path[0] or here)
    package_root = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if first == here and package_root != here:
        del sys.path[0]


_forget_working_directory()

from agentmonitors.cli.main import main  # noqa: E402 (after the path is made safe)

sys.exit(main())

"""What one monitor may do beyond its workspace, checked where it is done.

A :class:`Permit` travels with every observation (``ObservationContext.permit``). The
places that act on the world check it themselves, just before acting: the one spawn of
a monitor's command (``command_exec.run_command``), the one HTTP request path
(``http_fetch.fetch``, every redirect hop included), the file walk (``file_globs``:
its roots and every symlink) and the choice of a git repository (``git_refs``). So no
way of planting a declaration (a ``MONITOR.md``, a stored row, an agent's ``watch
declare``) gets past approval: whatever built the definition, the action itself is
refused unless the user approved exactly it (docs/security.md).

Only the trust policy (``catalog/trust.py``) mints a permit from the approval ledger;
the default one allows nothing beyond the workspace. Standard library only: every
source imports this module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence

from agentmonitors.fastpath.lean_dataclass import dataclass


def approve_command(monitor_id: str) -> str:
    """The command a user runs to approve ``monitor_id``."""
    return f"agentmonitors monitor approve {monitor_id}"


class NotApproved(PermissionError):
    """An action the monitor's permit does not cover; the message names the approval."""

    def __init__(self, monitor_id: str, action: str) -> None:
        who = f'monitor "{monitor_id}"' if monitor_id else "this monitor"
        fix = (
            f"the user approves it with `{approve_command(monitor_id)}`"
            if monitor_id
            else "only an approved monitor may"
        )
        super().__init__(f"{who} is not approved to {action}; {fix}")
        self.monitor_id = monitor_id
        self.action = action


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased, without credentials."""
    # Lazy: urllib.parse costs a file-monitor tick 2 ms; only a URL's origin needs it.
    from urllib.parse import urlsplit

    split = urlsplit(url.strip())
    return f"{split.scheme.lower()}://{split.netloc.rpartition('@')[2].lower()}"


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


@dataclass(frozen=True)
class Permit:
    """What an observation may do outside its workspace.

    ``trusted`` is the user's own monitor (user scope): nothing is checked. Otherwise
    ``commands`` are the exact argv lists approved (each with its working folder, as
    resolved against the workspace), ``origins`` the request origins and
    ``secret_env`` the variables whose values may be sent, and ``outside_paths`` the
    resolved folders or files outside the workspace that may be read.
    """

    monitor_id: str = ""
    trusted: bool = False
    commands: tuple[tuple[tuple[str, ...], str | None], ...] = ()
    origins: frozenset[str] = frozenset()
    secret_env: frozenset[str] = frozenset()
    outside_paths: frozenset[str] = frozenset()

    def check_run(self, argv: Sequence[str], cwd: str | None) -> None:
        """Raise :class:`NotApproved` unless running ``argv`` in ``cwd`` was approved."""
        if self.trusted:
            return
        wanted = (tuple(argv), _normal(cwd))
        if any((command, _normal(folder)) == wanted for command, folder in self.commands):
            return
        shown = json.dumps(list(argv), ensure_ascii=False)
        where = f" in {cwd}" if cwd else ""
        raise NotApproved(self.monitor_id, f"run {shown}{where}")

    def check_request(self, url: str, secret_env: Iterable[str] = ()) -> None:
        """Raise :class:`NotApproved` unless a request to ``url``'s origin, sending the
        values of ``secret_env``, was approved."""
        if self.trusted:
            return
        origin = origin_of(url)
        if origin not in self.origins:
            raise NotApproved(self.monitor_id, f"send requests to {origin}")
        unapproved = sorted(name for name in secret_env if name not in self.secret_env)
        if unapproved:
            raise NotApproved(self.monitor_id, f"send ${', $'.join(unapproved)} to {origin}")

    def may_read(self, real_path: str, workspace: str | None) -> bool:
        """Whether the resolved ``real_path`` is inside the workspace or approved."""
        if self.trusted:
            return True
        roots = [os.path.realpath(workspace)] if workspace else []
        roots += [os.path.realpath(path) for path in self.outside_paths]
        return any(_within(real_path, root) for root in roots)

    def check_read(self, path: str, workspace: str | None) -> None:
        """Raise :class:`NotApproved` unless ``path`` (as written and resolved) may be read."""
        if self.trusted:
            return
        lexical = os.path.normpath(os.path.abspath(path))
        for candidate in (lexical, os.path.realpath(lexical)):
            if not self.may_read(candidate, workspace) and not self._named(candidate):
                raise NotApproved(self.monitor_id, f"read {path} outside the workspace")

    def check_walk_root(self, root: str, climbs: bool, workspace: str | None) -> None:
        """Raise :class:`NotApproved` unless a glob walk may start at ``root``.

        ``root`` as written must lie in the workspace (symlinks under it are judged
        one by one as the walk meets them), or resolve into an approved outside path.
        A pattern whose ``..`` may climb out (``climbs``) needs its approval.
        """
        if self.trusted:
            return
        lexical = os.path.normpath(os.path.abspath(root))
        if workspace and not climbs:
            base = os.path.normpath(os.path.abspath(workspace))
            if _within(lexical, base) or _within(lexical, os.path.realpath(base)):
                return
        real = os.path.realpath(lexical)
        if any(_within(real, os.path.realpath(path)) for path in self.outside_paths):
            return
        raise NotApproved(self.monitor_id, f"read {root} outside the workspace")

    def _named(self, lexical: str) -> bool:
        return any(_within(lexical, os.path.normpath(root)) for root in self.outside_paths)


def _normal(cwd: str | None) -> str | None:
    return os.path.normpath(cwd) if cwd else None


# The permit of anything nobody approved (the workspace only), and of the user's own
# monitors (everything), for callers that observe outside the tick.
WORKSPACE_ONLY = Permit()
TRUSTED = Permit(trusted=True)

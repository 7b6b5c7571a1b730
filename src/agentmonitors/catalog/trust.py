"""Which project monitors the user has approved, and what approval covers.

A project's ``.claude/monitors`` is written by whoever wrote the repository. A monitor
from it that runs a command, fetches a URL, or reads a path outside the workspace runs
only once the user has approved exactly that: the approval is keyed by a sha256 of what
the monitor runs or reads (its *reach*), so a changed argv, cwd, env key set, outside
glob or URL host blocks it again. Each source says what its monitors reach (its
``approval`` trait, ``sources/reach.py`` for the bundled ones); monitors that stay
inside the workspace need nothing; the user's own scope (``~/.claude/monitors``) is
trusted.

The ledger lives in the user's data folder, one owner-only JSON file per workspace,
never in the repository the monitors came from.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from agentmonitors.agent_env import agent_variable
from agentmonitors.fastpath.digests import sha256
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.parse import ParseFailure, parse_monitor_file
from agentmonitors.paths import prepare_private_dir
from agentmonitors.sources.permit import Permit
from agentmonitors.sources.registry import load_registry
from agentmonitors.sources.traits import Approval
from agentmonitors.workspace import user_monitors_dir, workspace_data_dir, write_private_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentmonitors.sources.base import SourceRegistry

BLOCKED_REASON = "blocked: awaiting-approval"
LEDGER_NAME = "approvals.json"
LEDGER_VERSION = 1
# 2: the key hashes the private values too (env values, headers, credentials).
KEY_VERSION = 2


@dataclass(frozen=True)
class Requirement:
    """What one monitor runs or reads beyond the workspace, and its hash."""

    monitor_id: str
    source_name: str
    reach: dict[str, Any]
    digest: str
    # Completes "this monitor ...": what approval lets it do (the source words it).
    described: str = ""
    # What the choke points may then allow (sources/permit.py), from the source's Approval.
    approval: Approval | None = None

    def summary(self) -> str:
        """One line naming what approval lets the monitor do."""
        return self.described


def digest_of(
    source_name: str, reach: Mapping[str, Any], private: Mapping[str, Any] | None = None
) -> str:
    """The approval key: a sha256 of the canonical reach and, when there is one, of the
    private part (env values, headers, credentials), which is never stored itself."""
    document: dict[str, Any] = {"source": source_name, "reach": reach}
    if private:
        document["private"] = private
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256(canonical.encode("utf-8")).hexdigest()


def approval_refusal(without_terminal: bool, flag: str = "--yes") -> str | None:
    """Why this process may not record an approval, or None when the user may.

    Approval is the user's act: never where an agent host's variables say an agent
    runs the command, and otherwise only at an interactive terminal or with ``flag``
    (for the user's own scripts).
    """
    variable = agent_variable()
    if variable is not None:
        return (
            f"approval is the user's act and {variable} says an agent runs this command; "
            "run it yourself in a terminal outside the agent"
        )
    if without_terminal:
        return None
    if sys.stdin is not None and sys.stdin.isatty():
        return None
    return (
        "approval is the user's act: run this command at an interactive terminal, "
        f"or pass {flag} in a script of your own"
    )


def _user_scoped(file_path: str, scope: str | None) -> bool:
    if scope is not None:
        return scope == "user"
    if not file_path:
        return False  # a watch an agent declared has no file: never the user's own
    user_dir = user_monitors_dir()
    if not user_dir:
        return False
    real = os.path.realpath(user_dir)
    try:
        return os.path.commonpath([os.path.realpath(file_path), real]) == real
    except ValueError:
        return False


def _approval(registry: SourceRegistry, monitor: Any, workspace: str) -> Approval | None:
    name = monitor.source_name
    try:
        approval = registry.approval(name, monitor.source_config, workspace)
    except Exception as error:
        reason = str(error).strip() or type(error).__name__
        raise ValueError(
            f'source "{name}" cannot say what this monitor needs approved: {reason}'
        ) from error
    if approval is not None and not isinstance(approval, Approval):
        raise ValueError(
            f'source "{name}" answered approval() with {type(approval).__name__}, '
            "not an Approval or None"
        )
    return approval


def requirement_for(monitor: Any, workspace: str, registry: SourceRegistry) -> Requirement | None:
    """The approval ``monitor`` (a MonitorDefinition) needs in ``workspace``, or None.

    ``registry`` holds the monitor's source, which says what needs approving. Raises
    ``ValueError`` when the source cannot say (a plugin's ``approval`` failed).
    """
    if _user_scoped(monitor.file_path, monitor.scope):
        return None
    approval = _approval(registry, monitor, workspace)
    if approval is None:
        return None
    reach = approval.reach
    return Requirement(
        monitor.id,
        monitor.source_name,
        reach,
        digest_of(monitor.source_name, reach, approval.private),
        approval.summary,
        approval,
    )


def permit_for(
    monitor: Any,
    requirement: Requirement | None,
    approved: bool,
    outside_paths: frozenset[str],
) -> Permit:
    """The permit an observation of ``monitor`` carries (sources/permit.py).

    The only place a permit that allows more than the workspace is made: the user's
    own monitors are trusted; a monitor that needs approval gets exactly what its
    approval covers, and only when the ledger holds that approval (``approved``);
    everything else, the workspace alone.
    """
    if _user_scoped(monitor.file_path, monitor.scope):
        return Permit(monitor_id=monitor.id, trusted=True)
    if requirement is None or not approved or requirement.approval is None:
        return Permit(monitor_id=monitor.id)
    approval = requirement.approval
    return Permit(
        monitor_id=monitor.id,
        commands=approval.commands,
        origins=frozenset(approval.origins),
        secret_env=frozenset(approval.secret_env),
        outside_paths=outside_paths,
    )


# --------------------------------------------------------------------------- ledger


def ledger_path(workspace: str, env: Mapping[str, str] | None = None) -> str:
    return os.path.join(workspace_data_dir(workspace, env), LEDGER_NAME)


def read_ledger(workspace: str) -> dict[str, dict[str, Any]]:
    """``monitor id -> entry``; a missing or unreadable ledger approves nothing."""
    try:
        with open(ledger_path(workspace), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    approvals = data.get("approvals") if isinstance(data, dict) else None
    if not isinstance(approvals, dict):
        return {}
    return {key: value for key, value in approvals.items() if isinstance(value, dict)}


def is_approved(requirement: Requirement, ledger: Mapping[str, Mapping[str, Any]]) -> bool:
    entry = ledger.get(requirement.monitor_id)
    if entry is None:
        return False
    return entry.get("hash") == requirement.digest or carried_over(requirement, entry)


def carried_over(requirement: Requirement, entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is an approval recorded before the key hashed private values
    (env values, headers, credentials) that covers ``requirement`` as it is now.

    Such an approval was keyed by the names alone, so it is honoured once, for the values
    the monitor holds at that moment, and then rewritten under the full key
    (:func:`carry_over`): an upgrade makes no approved monitor wait, and a value changed
    after it does. A spelling the canonical reading now resolves differently (an alias)
    changes the reach itself, so it is never carried over.
    """
    if entry.get("keyVersion") is not None:
        return False
    legacy = digest_of(requirement.source_name, requirement.reach)
    return (
        bool(requirement.approval and requirement.approval.private) and entry.get("hash") == legacy
    )


def carry_over(workspace: str, requirements: list[Requirement]) -> None:
    """Rewrite carried-over approvals under the full key, keeping when they were given."""
    ledger = read_ledger(workspace)
    moved = [
        requirement
        for requirement in requirements
        if requirement.monitor_id in ledger
        and carried_over(requirement, ledger[requirement.monitor_id])
    ]
    if moved:
        record_approvals(workspace, moved, keep_stamps=True)


def record_approvals(
    workspace: str, requirements: list[Requirement], *, keep_stamps: bool = False
) -> None:
    """Add (or refresh) approvals for ``requirements`` in the workspace's ledger."""
    if not requirements:
        return
    ledger = read_ledger(workspace)
    # Lazy: only recording an approval stamps it; validate reads the ledger alone.
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    for requirement in requirements:
        previous = ledger.get(requirement.monitor_id) or {}
        ledger[requirement.monitor_id] = {
            "hash": requirement.digest,
            "keyVersion": KEY_VERSION,
            "source": requirement.source_name,
            "reach": requirement.reach,
            "approvedAt": previous.get("approvedAt", stamp) if keep_stamps else stamp,
        }
    path = ledger_path(workspace)
    prepare_private_dir(os.path.dirname(path))
    payload = {
        "version": LEDGER_VERSION,
        "workspacePath": os.path.abspath(workspace),
        "approvals": dict(sorted(ledger.items())),
    }
    write_private_file(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def approve_monitor(monitor: Any, workspace: str, registry: SourceRegistry) -> Requirement | None:
    """Approve ``monitor`` as it is now (what the user just created); None if it needs none."""
    requirement = requirement_for(monitor, workspace, registry)
    if requirement is not None:
        record_approvals(workspace, [requirement])
    return requirement


def approve_file(
    file_path: str, workspace: str, registry: SourceRegistry | None = None
) -> Requirement | None:
    """Approve the monitor in ``file_path`` as written; a file that does not parse is skipped.

    ``registry`` defaults to the bundled sources plus the installed plugins.
    """
    outcome = parse_monitor_file(file_path, "project")
    if isinstance(outcome, ParseFailure):
        return None
    if registry is None:
        registry = load_registry()
    return approve_monitor(outcome, workspace, registry)

"""Which project monitors the user has approved, and what approval covers.

A project's ``.claude/monitors`` is written by whoever wrote the repository. A monitor
from it that runs a command, fetches a URL, or reads a path outside the workspace runs
only once the user has approved exactly that: the approval is keyed by a sha256 of what
the monitor runs or reads (its *reach*), so a changed argv, cwd, env key set, outside
glob or URL host blocks it again. Monitors that stay inside the workspace (and
``schedule``) need nothing; the user's own scope (``~/.claude/monitors``) is trusted.

The ledger lives in the user's data folder, one owner-only JSON file per workspace,
never in the repository the monitors came from.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from agentmonitors.paths import prepare_private_dir
from agentmonitors.workspace import user_monitors_dir, workspace_data_dir, write_private_file

BLOCKED_REASON = "blocked: awaiting-approval"
LEDGER_NAME = "approvals.json"
LEDGER_VERSION = 1


def approve_command(monitor_id: str) -> str:
    return f"agentmonitors monitor approve {monitor_id}"


@dataclass(frozen=True)
class Requirement:
    """What one monitor runs or reads beyond the workspace, and its hash."""

    monitor_id: str
    source_name: str
    reach: dict[str, Any]
    digest: str

    def summary(self) -> str:
        """One line naming what approval lets the monitor do."""
        reach = self.reach
        if "argv" in reach:
            text = "runs " + json.dumps(reach["argv"], ensure_ascii=False)
            if reach.get("cwd"):
                text += f" in {reach['cwd']}"
            if reach.get("envKeys"):
                text += " with env " + ", ".join(reach["envKeys"])
            return text
        if "hosts" in reach:
            text = "fetches from " + ", ".join(reach["hosts"])
            if reach.get("secretEnv"):
                text += " sending $" + ", $".join(reach["secretEnv"])
            return text
        return "reads outside the workspace: " + ", ".join(reach.get("outside", ()))


# --------------------------------------------------------------------------- reach


def _inside(path: str, workspace: str) -> bool:
    """Whether ``path`` stays in ``workspace`` both as written and once links resolve."""
    root = os.path.normpath(os.path.abspath(workspace))
    real_root = os.path.realpath(root)
    normal = os.path.normpath(path)
    for candidate, base in ((normal, root), (os.path.realpath(normal), real_root)):
        try:
            if os.path.commonpath([candidate, base]) != base:
                return False
        except ValueError:
            return False
    return True


def _base(cwd: Any, workspace: str) -> str:
    from agentmonitors.sources.file_globs import resolve_base

    return resolve_base(cwd if isinstance(cwd, str) and cwd else None, workspace)


def _glob_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _outside_globs(config: Mapping[str, Any], workspace: str) -> tuple[list[str], list[str]]:
    """(the authored globs that reach outside the workspace, the folders they reach)."""
    from agentmonitors.sources.file_globs import compile_patterns

    base = _base(config.get("cwd"), workspace)
    outside: list[str] = []
    reached: list[str] = []
    for pattern in _glob_list(config.get("globs")):
        try:
            compiled = compile_patterns([pattern], base)
        except ValueError:
            outside.append(pattern)  # too many alternatives to judge: ask rather than guess
            continue
        for alternative in compiled:
            # ".." after a wildcard can climb anywhere: judged outside.
            if alternative.needs_normalising or not _inside(alternative.root, workspace):
                if pattern not in outside:
                    outside.append(pattern)
                reached.append(os.path.realpath(alternative.root))
    return outside, reached


def outside_paths(source_name: str, config: Mapping[str, Any], workspace: str) -> frozenset[str]:
    """Resolved outside folders (or files) a monitor's own globs name.

    Given to the source of an approved (or user-scope) monitor, so a glob root that is
    a symlink out of the workspace is followed once that very glob was approved.
    """
    if source_name != "file-fingerprint":
        return frozenset()
    return frozenset(_outside_globs(config, workspace)[1])


def _hosts(config: Mapping[str, Any]) -> list[str]:
    urls = [config.get("url")]
    detection = config.get("change-detection")
    composite = detection.get("composite") if isinstance(detection, dict) else None
    parts = composite.get("parts") if isinstance(composite, dict) else None
    if isinstance(parts, list):
        urls += [part.get("url") for part in parts if isinstance(part, dict)]
    hosts: set[str] = set()
    for url in urls:
        if not isinstance(url, str):
            continue
        split = urlsplit(url.strip())
        hosts.add(f"{split.scheme.lower()}://{split.netloc.rpartition('@')[2].lower()}")
    return sorted(hosts)


def reach_of(source_name: str, config: Mapping[str, Any], workspace: str) -> dict[str, Any] | None:
    """What a monitor of ``source_name`` runs or reads beyond ``workspace``; None if nothing.

    Only names go in: env keys, never their values; a URL's scheme and host, never its
    path or query (tokens live there), so approval does not store a secret.
    """
    if source_name == "command-poll":
        command = config.get("command")
        env = config.get("env")
        cwd = config.get("cwd")
        return {
            "argv": list(command) if isinstance(command, list) else command,
            "cwd": cwd if isinstance(cwd, str) and cwd else None,
            "envKeys": sorted(env) if isinstance(env, dict) else [],
        }
    if source_name == "api-poll":
        auth = config.get("auth")
        token_env = auth.get("token-env") if isinstance(auth, dict) else None
        return {
            "hosts": _hosts(config),
            "secretEnv": [token_env] if isinstance(token_env, str) else [],
        }
    if source_name == "file-fingerprint":
        outside = _outside_globs(config, workspace)[0]
        if not outside:
            return None
        cwd = config.get("cwd")
        return {"cwd": cwd if isinstance(cwd, str) and cwd else None, "outside": outside}
    if source_name == "incoming-changes":
        cwd = config.get("cwd")
        if _inside(_base(cwd, workspace), workspace):
            return None
        return {"outside": [str(cwd)]}
    return None


def digest_of(source_name: str, reach: Mapping[str, Any]) -> str:
    canonical = json.dumps(
        {"source": source_name, "reach": reach},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _user_scoped(file_path: str, scope: str | None) -> bool:
    if scope is not None:
        return scope == "user"
    user_dir = user_monitors_dir()
    if not user_dir:
        return False
    real = os.path.realpath(user_dir)
    try:
        return os.path.commonpath([os.path.realpath(file_path), real]) == real
    except ValueError:
        return False


def requirement_for(monitor: Any, workspace: str) -> Requirement | None:
    """The approval ``monitor`` (a MonitorDefinition) needs in ``workspace``, or None."""
    if _user_scoped(monitor.file_path, monitor.scope):
        return None
    reach = reach_of(monitor.source_name, monitor.source_config, workspace)
    if reach is None:
        return None
    return Requirement(
        monitor.id, monitor.source_name, reach, digest_of(monitor.source_name, reach)
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
    return entry is not None and entry.get("hash") == requirement.digest


def record_approvals(workspace: str, requirements: list[Requirement]) -> None:
    """Add (or refresh) approvals for ``requirements`` in the workspace's ledger."""
    if not requirements:
        return
    ledger = read_ledger(workspace)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    for requirement in requirements:
        ledger[requirement.monitor_id] = {
            "hash": requirement.digest,
            "source": requirement.source_name,
            "reach": requirement.reach,
            "approvedAt": stamp,
        }
    path = ledger_path(workspace)
    prepare_private_dir(os.path.dirname(path))
    payload = {
        "version": LEDGER_VERSION,
        "workspacePath": os.path.abspath(workspace),
        "approvals": dict(sorted(ledger.items())),
    }
    write_private_file(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def approve_monitor(monitor: Any, workspace: str) -> Requirement | None:
    """Approve ``monitor`` as it is now (what the user just created); None if it needs none."""
    requirement = requirement_for(monitor, workspace)
    if requirement is not None:
        record_approvals(workspace, [requirement])
    return requirement


def approve_file(file_path: str, workspace: str) -> Requirement | None:
    """Approve the monitor in ``file_path`` as written; a file that does not parse is skipped."""
    from agentmonitors.monitor.parse import ParseFailure, parse_monitor_file

    outcome = parse_monitor_file(file_path, "project")
    if isinstance(outcome, ParseFailure):
        return None
    return approve_monitor(outcome, workspace)

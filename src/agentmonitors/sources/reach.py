"""What the bundled sources must have approved: their reach beyond the workspace.

Each bundled source's ``approval`` trait is built here (see ``catalog/trust.py`` for
the ledger that records approvals). Only names go in a reach: env keys, never their
values; a URL's scheme and host, never its path or query (tokens live there), so an
approval never stores a secret.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from agentmonitors.sources.traits import Approval


def inside(path: str, workspace: str) -> bool:
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


def _cwd(config: Mapping[str, Any]) -> str | None:
    cwd = config.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def _glob_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def reads_outside(outside: list[str]) -> str:
    return "reads outside the workspace: " + ", ".join(outside)


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
            if alternative.needs_normalising or not inside(alternative.root, workspace):
                if pattern not in outside:
                    outside.append(pattern)
                reached.append(os.path.realpath(alternative.root))
    return outside, reached


def glob_approval(config: Mapping[str, Any], workspace: str) -> Approval | None:
    """A glob monitor reads outside the workspace when a glob (or its cwd) leads there."""
    outside = _outside_globs(config, workspace)[0]
    if not outside:
        return None
    return Approval({"cwd": _cwd(config), "outside": outside}, reads_outside(outside))


def glob_outside_paths(config: Mapping[str, Any], workspace: str) -> frozenset[str]:
    """Resolved outside folders (or files) a glob monitor's own globs name.

    Given to the source of an approved (or user-scope) monitor, so a glob root that is
    a symlink out of the workspace is followed once that very glob was approved.
    """
    return frozenset(_outside_globs(config, workspace)[1])


def command_approval(config: Mapping[str, Any]) -> Approval:
    """A command always needs approval: its argv, folder and env key names."""
    command = config.get("command")
    env = config.get("env")
    argv = list(command) if isinstance(command, list) else command
    cwd = _cwd(config)
    env_keys = sorted(env) if isinstance(env, dict) else []
    summary = "runs " + json.dumps(argv, ensure_ascii=False)
    if cwd:
        summary += f" in {cwd}"
    if env_keys:
        summary += " with env " + ", ".join(env_keys)
    return Approval({"argv": argv, "cwd": cwd, "envKeys": env_keys}, summary)


def _hosts(config: Mapping[str, Any]) -> list[str]:
    urls = [config.get("url")]
    detection = config.get("change-detection")
    composite = detection.get("composite") if isinstance(detection, dict) else None
    parts = composite.get("parts") if isinstance(composite, dict) else None
    if isinstance(parts, list):
        urls += [part.get("url") for part in parts if isinstance(part, dict)]
    # Here, not at the top: file sources import this module too, and urllib.parse
    # (with ipaddress) costs a tick of theirs more than it ever uses.
    from urllib.parse import urlsplit

    hosts: set[str] = set()
    for url in urls:
        if not isinstance(url, str):
            continue
        split = urlsplit(url.strip())
        hosts.add(f"{split.scheme.lower()}://{split.netloc.rpartition('@')[2].lower()}")
    return sorted(hosts)


def url_approval(config: Mapping[str, Any]) -> Approval:
    """A fetch always needs approval: the hosts it talks to and the token it sends."""
    auth = config.get("auth")
    token_env = auth.get("token-env") if isinstance(auth, dict) else None
    hosts = _hosts(config)
    secret_env = [token_env] if isinstance(token_env, str) else []
    summary = "fetches from " + ", ".join(hosts)
    if secret_env:
        summary += " sending $" + ", $".join(secret_env)
    return Approval({"hosts": hosts, "secretEnv": secret_env}, summary)


def repository_approval(config: Mapping[str, Any], workspace: str) -> Approval | None:
    """A repository outside the workspace (``cwd``) needs approval to be read."""
    cwd = config.get("cwd")
    if inside(_base(cwd, workspace), workspace):
        return None
    outside = [str(cwd)]
    return Approval({"outside": outside}, reads_outside(outside))

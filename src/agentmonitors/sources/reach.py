"""What the bundled sources must have approved: their reach beyond the workspace.

Each bundled source's ``approval`` trait is built here (see ``catalog/trust.py`` for
the ledger that records approvals). Only names go in a reach: env keys, never their
values; a URL's scheme and host, never its path or query (tokens live there), so an
approval never stores a secret. What else changes what runs or is sent (env values,
headers, literal credentials) goes in the approval's ``private`` part, which is hashed
and never stored. Every approval is built from the canonical config (the reading
``observe`` itself uses, aliases resolved), so a spelling the schema also accepts
cannot slip past it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from agentmonitors.sources.file_globs import compile_patterns, resolve_base
from agentmonitors.sources.permit import origin_of
from agentmonitors.sources.traits import Approval

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


def command_approval(
    argv: list[str], cwd: str | None, env: Mapping[str, str] | None, resolved_cwd: str | None
) -> Approval:
    """A command always needs approval: its argv, folder and env (names shown, values
    hashed), read from the canonical config; ``resolved_cwd`` is where it will run."""
    env_keys = sorted(env or {})
    summary = "runs " + json.dumps(argv, ensure_ascii=False)
    if cwd:
        summary += f" in {cwd}"
    if env_keys:
        summary += " with env " + ", ".join(env_keys)
    # A changed value (BASH_ENV, PATH) runs something new: hashed, never stored.
    private = {"env": {key: env[key] for key in env_keys}} if env else {}
    return Approval(
        {"argv": argv, "cwd": cwd, "envKeys": env_keys},
        summary,
        private=private,
        commands=((tuple(argv), resolved_cwd),),
    )


def origins_of(urls: Sequence[str | None]) -> list[str]:
    """The sorted ``scheme://host[:port]`` origins of ``urls`` (credentials left out)."""
    return sorted({origin_of(url) for url in urls if isinstance(url, str)})


def url_approval(
    urls: Sequence[str | None],
    secret_env: Sequence[str],
    sent: Mapping[str, Any],
) -> Approval:
    """A fetch always needs approval: the origins it talks to, the variables whose
    values it sends, and (hashed, never stored) what else it sends: ``sent`` holds the
    method, headers and literal credentials as the canonical config gives them."""
    hosts = origins_of(urls)
    summary = "fetches from " + ", ".join(hosts)
    if secret_env:
        summary += " sending $" + ", $".join(secret_env)
    private = {key: value for key, value in sent.items() if value not in (None, {}, [])}
    return Approval(
        {"hosts": hosts, "secretEnv": list(secret_env)},
        summary,
        private=private,
        origins=tuple(hosts),
        secret_env=tuple(secret_env),
    )


def repository_approval(cwd: str | None, workspace: str) -> Approval | None:
    """A repository outside the workspace (``cwd``) needs approval to be read."""
    if inside(_base(cwd, workspace), workspace):
        return None
    outside = [str(cwd)]
    return Approval({"outside": outside}, reads_outside(outside))


def repository_outside_paths(cwd: str | None, workspace: str) -> frozenset[str]:
    """The resolved repository folder, when it lies outside the workspace."""
    base = _base(cwd, workspace)
    return frozenset() if inside(base, workspace) else frozenset({os.path.realpath(base)})

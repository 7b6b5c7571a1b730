"""Each bundled source's approval, read without its module, is the source's own."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.registry import BUNDLED_APPROVALS, bundled_registry

CONFIGS: dict[str, list[dict[str, Any]]] = {
    "file-fingerprint": [{"globs": ["notes/*.md"]}, {"globs": ["../outside/*.md"]}],
    "api-poll": [
        {"url": "http://127.0.0.1:9/x", "interval": "5m"},
        {"url": "https://example.com/a", "headers": {"X-Key": "v"}, "method": "POST"},
    ],
    "command-poll": [
        {"command": ["git", "status"], "interval": "5m"},
        {"command": ["make"], "cwd": "sub", "env": {"A": "1"}},
    ],
    "schedule": [{"cron": "0 9 * * 1"}],
    "incoming-changes": [
        {"paths": ["docs/"]},
        {"paths": ["src/", "*.md"], "branch": "main", "cwd": "../other-repo"},
    ],
}


@pytest.mark.parametrize("name", sorted(BUNDLED_APPROVALS))
def test_the_light_approval_is_the_source_s(name: str, tmp_path: Path) -> None:
    workspace = str(tmp_path)
    light = bundled_registry()
    full = bundled_registry()
    source = full.traits(name)
    for config in CONFIGS[name]:
        assert light.approval(name, config, workspace) == source.approval(config, workspace)
    where = BUNDLED_APPROVALS[name]
    if where is not None:
        module, _, function = where.partition(":")
        assert callable(getattr(importlib.import_module(module), function))

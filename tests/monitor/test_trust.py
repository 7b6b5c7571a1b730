"""What a monitor runs or reads beyond the workspace, and so what an approval is keyed by."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.catalog.trust import digest_of
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.sources.traits import SourceTraits

traits = bundled_registry().traits


def reach_of(source: SourceTraits, config: dict[str, Any], workspace: str) -> Any:
    """What approval covers for this config, or None (the source's own ``approval``)."""
    approval = source.approval(config, workspace)
    return None if approval is None else approval.reach


@pytest.fixture
def workspace(tmp_path: Path) -> str:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    return str(root)


def test_command_poll_is_keyed_by_argv_cwd_and_env_names_only(workspace: str) -> None:
    config = {"command": ["make", "check"], "cwd": "sub", "env": {"B": "secret", "A": "x"}}
    reach = reach_of(traits("command-poll"), config, workspace)
    assert reach == {"argv": ["make", "check"], "cwd": "sub", "envKeys": ["A", "B"]}
    same_keys = {**config, "env": {"A": "other", "B": "values"}}
    assert digest_of("command-poll", reach) == digest_of(
        "command-poll", reach_of(traits("command-poll"), same_keys, workspace) or {}
    )
    changed = {**config, "command": ["make", "deploy"]}
    assert digest_of("command-poll", reach) != digest_of(
        "command-poll", reach_of(traits("command-poll"), changed, workspace) or {}
    )


def test_api_poll_is_keyed_by_scheme_and_host_never_path_query_or_userinfo(
    workspace: str,
) -> None:
    config = {
        "url": "https://user:pw@API.example.com:8443/v1/items?token=abc",
        "auth": {"type": "bearer", "token-env": "API_TOKEN"},
    }
    reach = reach_of(traits("api-poll"), config, workspace)
    assert reach == {"hosts": ["https://api.example.com:8443"], "secretEnv": ["API_TOKEN"]}
    other_path = {**config, "url": "https://API.example.com:8443/v2/other"}
    assert reach_of(traits("api-poll"), other_path, workspace) == reach
    composite = {
        "change-detection": {
            "composite": {
                "object-key": "k",
                "parts": [
                    {"id": "a", "url": "http://127.0.0.1:9/a"},
                    {"id": "b", "url": "http://b.test/x"},
                ],
            }
        }
    }
    assert reach_of(traits("api-poll"), composite, workspace) == {
        "hosts": ["http://127.0.0.1:9", "http://b.test"],
        "secretEnv": [],
    }


@pytest.mark.parametrize(
    "globs",
    ["../outside/*", "/etc/*.conf", "~/.ssh/*", ["docs/*.md", "../../x/**"], "docs/*/../../../y"],
)
def test_file_fingerprint_globs_leaving_the_workspace_need_approval(
    workspace: str, globs: object
) -> None:
    reach = reach_of(traits("file-fingerprint"), {"globs": globs}, workspace)
    assert reach is not None
    # Only what leaves is part of the key: adding an inside glob changes nothing.
    assert "docs/*.md" not in reach["outside"]


def test_a_cwd_outside_the_workspace_makes_relative_globs_outside(workspace: str) -> None:
    reach = reach_of(traits("file-fingerprint"), {"globs": "*.txt", "cwd": ".."}, workspace)
    assert reach == {"cwd": "..", "outside": ["*.txt"]}


def test_a_glob_root_that_is_a_symlink_out_of_the_workspace_needs_approval(
    workspace: str, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, os.path.join(workspace, "link"))
    assert reach_of(traits("file-fingerprint"), {"globs": "link/*"}, workspace) is not None


def test_what_stays_inside_needs_nothing(workspace: str) -> None:
    assert (
        reach_of(traits("file-fingerprint"), {"globs": ["docs/**/*.md", "./a.txt"]}, workspace)
        is None
    )
    assert reach_of(traits("incoming-changes"), {"paths": ["docs/**"]}, workspace) is None
    assert reach_of(traits("schedule"), {"cron": "0 9 * * *"}, workspace) is None


def test_incoming_changes_in_another_repository_needs_approval(workspace: str) -> None:
    reach = reach_of(traits("incoming-changes"), {"paths": ["a"], "cwd": "/srv/other"}, workspace)
    assert reach == {"outside": ["/srv/other"]}

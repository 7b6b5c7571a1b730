"""Pull requests as ``gh pr list --json`` prints them, and the presets run over them.

:func:`pr` builds one PR record with every field the presets ask for, in the shapes
``gh`` uses (``CheckRun``/``StatusContext`` rollup entries, ``User``/``Team`` review
requests, ``latestReviews``, ``comments``). :class:`Scaffolded` writes a preset with
the real ``init`` code and runs the real command-poll source over it with an injected
time, on a PATH that holds only ``sh``, ``jq`` and the stubbed ``gh``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmonitors.catalog.scaffold import scaffold_monitor
from agentmonitors.monitor.model import MonitorDefinition
from agentmonitors.monitor.parse import parse_monitor_file
from agentmonitors.sources.command_poll import CommandPollSource
from agentmonitors.sources.observation import Observation, ObservationContext
from agentmonitors.sources.permit import TRUSTED
from tests.catalog import gh_stub

ME = "octo-me"
PEER = "alice"
REPO_URL = "https://github.com/acme/widgets"
T0 = 1_796_120_400  # 2026-12-01T10:20:00Z, in seconds
HOUR = 3600


def iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check(name: str, outcome: str) -> dict[str, Any]:
    """A ``CheckRun``: ``outcome`` is a conclusion, or ``QUEUED``/``IN_PROGRESS``."""
    running = outcome in ("QUEUED", "IN_PROGRESS")
    return {
        "__typename": "CheckRun",
        "completedAt": "0001-01-01T00:00:00Z" if running else iso(T0),
        "conclusion": "" if running else outcome,
        "detailsUrl": f"{REPO_URL}/actions/runs/1/job/2",
        "name": name,
        "startedAt": iso(T0),
        "status": outcome if running else "COMPLETED",
        "workflowName": "CI",
    }


def status(context: str, state: str) -> dict[str, Any]:
    """A legacy commit ``StatusContext``."""
    return {
        "__typename": "StatusContext",
        "context": context,
        "startedAt": iso(T0),
        "state": state,
        "targetUrl": "https://ci.example.invalid/1",
    }


def review(by: str, state: str, at: float) -> dict[str, Any]:
    return {
        "author": {"login": by},
        "authorAssociation": "MEMBER",
        "body": "",
        "includesCreatedEdit": False,
        "reactionGroups": [],
        "state": state,
        "submittedAt": iso(at),
    }


def comment(by: str, at: float, body: str = "a note") -> dict[str, Any]:
    return {
        "id": f"IC_{by}_{int(at)}",
        "author": {"login": by},
        "authorAssociation": "MEMBER",
        "body": body,
        "createdAt": iso(at),
        "includesCreatedEdit": False,
        "isMinimized": False,
        "minimizedReason": "",
        "reactionGroups": [],
        "url": f"{REPO_URL}/pull/1#issuecomment-1",
        "viewerDidAuthor": by == ME,
    }


def pr(
    number: int,
    *,
    author: str = PEER,
    state: str = "OPEN",
    draft: bool = False,
    decision: str = "",
    checks: tuple[dict[str, Any], ...] = (),
    requested: tuple[str, ...] = (),
    teams: tuple[str, ...] = (),
    reviews: tuple[dict[str, Any], ...] = (),
    comments: tuple[dict[str, Any], ...] = (),
    labels: tuple[str, ...] = (),
    merged_at: float | None = None,
    closed_at: float | None = None,
    title: str | None = None,
    updated_at: float = T0,
) -> dict[str, Any]:
    """One PR with every field ``gh pr list --json`` can return that the presets read."""
    bot = author.startswith("app/")
    return {
        "number": number,
        "title": title or f"Change number {number}",
        "url": f"{REPO_URL}/pull/{number}",
        "headRefName": f"topic-{number}",
        "state": state,
        "isDraft": draft,
        "author": {"id": f"U_{author}", "is_bot": bot, "login": author, "name": author},
        "reviewDecision": decision,
        "reviewRequests": [{"__typename": "User", "login": login} for login in requested]
        + [{"__typename": "Team", "name": team, "slug": team} for team in teams],
        "statusCheckRollup": list(checks),
        "latestReviews": list(reviews),
        "comments": list(comments),
        "labels": [{"id": f"L_{name}", "name": name, "color": "ededed"} for name in labels],
        "mergedAt": iso(merged_at) if merged_at is not None else None,
        "closedAt": iso(closed_at if closed_at is not None else merged_at)
        if (merged_at is not None or closed_at is not None)
        else None,
        "createdAt": iso(T0 - 48 * HOUR),
        "updatedAt": iso(updated_at),
    }


def tool_bin(root: Path, *, with_gh: bool = True, with_jq: bool = True) -> Path:
    """A folder to be the whole PATH: ``sh``, ``jq`` and (unless told) the ``gh`` stub."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    tools = ["sh", *(["jq"] if with_jq else [])]
    for tool in tools:
        found = shutil.which(tool)
        assert found is not None, f"{tool} is needed on this machine"
        os.symlink(found, bin_dir / tool)
    if with_gh:
        gh_stub.install(bin_dir, {"login": ME, "url": REPO_URL, "prs": []})
    return bin_dir


class Scaffolded:
    """One preset as ``init`` writes it, observed by the real command-poll source."""

    def __init__(self, workspace: Path, preset: str) -> None:
        self.workspace = workspace
        result = scaffold_monitor(str(workspace / ".claude" / "monitors"), preset, preset)
        assert result.created
        self.file = Path(result.file_path)
        definition = parse_monitor_file(result.file_path)
        assert isinstance(definition, MonitorDefinition), definition
        self.config: dict[str, Any] = definition.source_config
        self.key = preset
        self.state: Any = None

    def observe(self, now_s: float) -> list[Observation]:
        context = ObservationContext(
            previous_state=self.state,
            now_ms=int(now_s * 1000),
            workspace_path=str(self.workspace),
            monitor_id=self.key,
            permit=TRUSTED,
        )
        result = asyncio.run(CommandPollSource().observe(dict(self.config), context))
        self.state = result.next_state
        return result.observations

    def payload(self) -> list[dict[str, Any]]:
        """What the last successful run printed (the diffed membership set)."""
        assert self.state is not None and self.state["health"] == "ok", self.state
        value = json.loads(self.state["stdout"])
        assert isinstance(value, list)
        return value

    def numbers(self) -> list[int]:
        return [entry["number"] for entry in self.payload()]


class GitHub:
    """The recorded state the ``gh`` stub answers from."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.log = bin_dir / "calls.jsonl"
        self.prs: dict[int, dict[str, Any]] = {}
        self.mode = "ok"
        self.url = REPO_URL

    def put(self, *records: dict[str, Any]) -> None:
        for record in records:
            self.prs[record["number"]] = record
        self.publish()

    def publish(self) -> None:
        gh_stub.write_scenario(
            self.bin_dir,
            {"mode": self.mode, "login": ME, "url": self.url, "prs": list(self.prs.values())},
        )

    def calls(self) -> list[dict[str, Any]]:
        return gh_stub.calls(self.log)

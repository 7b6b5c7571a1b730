"""A stand-in for the ``gh`` executable, answering from a recorded scenario.

Installed by :func:`install` as ``<bin>/gh`` (this file with a shebang for the running
interpreter); it reads ``scenario.json`` beside itself and appends one line per call to
``calls.jsonl`` (argv, working folder, which token variables it could see). It answers
only what the PR presets ask (``repo view``, ``api user``, ``pr list``) the way ``gh``
does: the fields named by ``--json``, pretty-printed, filtered by ``--state``,
``--author @me`` and the ``--search`` qualifiers the presets use. ``mode`` in the
scenario simulates a signed-out ``gh`` (gh's own message, exit 4).

Standard library only: it runs in the scrubbed environment of the command under test.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

TOKEN_VARIABLES = (
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_REPO",
)
SIGNED_OUT = (
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
    "authentication token.\n"
)
STATES = {"open": "OPEN", "merged": "MERGED", "closed": "CLOSED"}


def install(bin_dir: Path, scenario: dict[str, Any]) -> Path:
    """Write ``bin_dir/gh`` and its scenario; return the path of the call log."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / "gh"
    stub.write_text(f"#!{sys.executable}\n" + Path(__file__).read_text(encoding="utf-8"))
    stub.chmod(0o755)
    write_scenario(bin_dir, scenario)
    return bin_dir / "calls.jsonl"


def write_scenario(bin_dir: Path, scenario: dict[str, Any]) -> None:
    scratch = bin_dir / "scenario.next"
    scratch.write_text(json.dumps(scenario))
    os.replace(scratch, bin_dir / "scenario.json")


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def _options(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    words: list[str] = []
    options: dict[str, str] = {}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token.startswith("--") and index + 1 < len(argv):
            options[token[2:]] = argv[index + 1]
            index += 2
        else:
            words.append(token)
            index += 1
    return words, options


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _matches(pr: dict[str, Any], qualifier: str, login: str) -> bool:
    """One ``--search`` qualifier, as GitHub's search reads it."""
    if qualifier == "review-requested:@me":
        # GitHub expands team requests to their members; every team here is the viewer's.
        return any(
            request.get("login") == login or "slug" in request
            for request in pr.get("reviewRequests", [])
        )
    if qualifier == "-author:@me":
        return bool(pr["author"]["login"] != login)
    if qualifier.startswith("label:"):
        return qualifier[6:] in [label["name"] for label in pr.get("labels", [])]
    for field, prefix in (("mergedAt", "merged:>="), ("closedAt", "closed:>=")):
        if qualifier.startswith(prefix):
            stamp = pr.get(field)
            return bool(stamp) and _epoch(stamp) >= _epoch(qualifier[len(prefix) :])
    if qualifier == "-is:merged":
        return pr["state"] != "MERGED"
    raise SystemExit(f"gh stub: unsupported search qualifier {qualifier!r}")


def _pr_list(options: dict[str, str], scenario: dict[str, Any]) -> str:
    login = scenario["login"]
    rows = [pr for pr in scenario["prs"] if pr["state"] == STATES[options.get("state", "open")]]
    if options.get("author") == "@me":
        rows = [pr for pr in rows if pr["author"]["login"] == login]
    for qualifier in options.get("search", "").split():
        rows = [pr for pr in rows if _matches(pr, qualifier, login)]
    rows.sort(key=lambda pr: -int(pr["number"]))  # newest first, as gh lists them
    rows = rows[: int(options.get("limit", "30"))]
    fields = options["json"].split(",")
    return json.dumps([{field: pr.get(field) for field in fields} for pr in rows], indent=2)


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    scenario = json.loads((here / "scenario.json").read_text())
    with (here / "calls.jsonl").open("a") as log:
        seen = {name: name in os.environ for name in TOKEN_VARIABLES}
        log.write(json.dumps({"argv": argv, "cwd": os.getcwd(), "tokens": seen}) + "\n")
    if scenario.get("mode") == "signed-out":
        sys.stderr.write(SIGNED_OUT)
        return 4
    words, options = _options(argv)
    if words[:2] == ["repo", "view"]:
        print(scenario["url"])
    elif words[:2] == ["api", "user"]:
        print(scenario["login"])
    elif words[:2] == ["pr", "list"]:
        print(_pr_list(options, scenario))
    else:
        sys.stderr.write(f"unknown command {' '.join(words)!r} for gh stub\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``init``: monitor templates, scaffolding, and project bootstrap (.gitignore)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentmonitors.sources.command_poll import SCAFFOLD_DEFAULT_COMMAND

SOURCE_TYPES = ("file-fingerprint", "api-poll", "command-poll", "schedule", "incoming-changes")
DEFAULT_TYPE = "file-fingerprint"
DEFAULT_MONITOR_NAME = "my-monitor"
GITIGNORE_LINES = (".claude/*.local.*", "/.agentmonitors/")
GLOB_FIELD_BY_TYPE = {"file-fingerprint": "globs", "incoming-changes": "paths"}
MONITOR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ScaffoldError(ValueError):
    """A scaffold request that cannot be honoured; nothing was written."""


def quote(value: str) -> str:
    """A YAML single-quoted scalar (safe for any text on one line)."""
    return "'" + value.replace("'", "''") + "'"


def readable_name(positional: str) -> str | None:
    """``watch-docs`` → ``Watch docs``; None when there is no word to use."""
    words = [word for word in re.split(r"[-_]+", positional) if word]
    if not words:
        return None
    first, *rest = words
    return " ".join([first[:1].upper() + first[1:], *rest])


def _list_block(items: Sequence[str], indent: str = "    ") -> str:
    return "\n".join(f"{indent}- {quote(item)}" for item in items)


def render_template(
    source_type: str,
    *,
    name: str,
    urgency: str = "normal",
    patterns: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
) -> str:
    """The MONITOR.md text for a new monitor of ``source_type``."""
    header = f"---\nname: {quote(name)}\nwatch:\n  type: {source_type}\n"
    footer_urgency = (
        "# low: a reminder when the agent is idle; normal: a reminder at the next prompt;\n"
        "# high: the change itself, injected at the next prompt or tool call.\n"
        f"urgency: {urgency}\n---\n\n"
    )
    if source_type == "file-fingerprint":
        globs = list(patterns) if patterns else ["**/*.ts"]
        watch = (
            "  # Files to fingerprint, relative to the project root. ** crosses folders,\n"
            "  # {a,b} picks alternatives; dotfiles only match when named.\n"
            f"  globs:\n{_list_block(globs)}\n"
            "  # Optional: patterns to leave out, and how often to re-hash as a safety net.\n"
            "  # ignore:\n  #   - '**/node_modules/**'\n  # interval: 30s\n"
        )
        body = (
            "A watched file was created, changed or deleted. Read the change, decide whether\n"
            "it affects the current task, and act on it before carrying on.\n"
        )
    elif source_type == "api-poll":
        watch = (
            "  url: 'https://example.com/status.json'\n"
            "  method: GET\n"
            "  interval: 5m\n"
            "  # JSON responses are compared as JSON and anything else as text, unless you\n"
            "  # pick a strategy: text-diff, json-diff or status-code.\n"
            "  # change-detection:\n  #   strategy: status-code\n"
            "  # Credentials come from the environment, never from this file:\n"
            "  # auth:\n  #   type: bearer\n  #   token-env: STATUS_API_TOKEN\n"
        )
        body = (
            "The endpoint's response changed. Look at what differs and decide whether the\n"
            "work in progress needs to react to it.\n"
        )
    elif source_type == "command-poll":
        argv = list(command) if command else list(SCAFFOLD_DEFAULT_COMMAND)
        explain = (
            "  # An argv list, run directly without a shell. This example asks the remote for\n"
            "  # the current tip of main, so it sees pushes without a prior fetch.\n"
            if not command
            else "  # An argv list, run directly without a shell.\n"
        )
        watch = (
            f"{explain}  # For pipes or globbing, run a shell yourself: ['sh', '-c', 'a | b'].\n"
            f"  command:\n{_list_block(argv)}\n"
            "  interval: 5m\n"
            "  change-detection:\n"
            "    # text-diff compares stdout, json-diff compares it as JSON, exit-code\n"
            "    # compares only the exit status.\n"
            "    strategy: text-diff\n"
        )
        body = (
            "The command's output changed. Review what is new and decide whether it affects\n"
            "this workspace.\n"
        )
    elif source_type == "schedule":
        watch = (
            "  # minute hour day-of-month month day-of-week: weekdays at 09:00.\n"
            "  cron: '0 9 * * 1-5'\n"
            "  timezone: UTC\n"
            "  # label: Morning check-in\n"
        )
        body = (
            "It is time for the scheduled check. Review the state of the work and report\n"
            "anything that needs attention.\n"
        )
    elif source_type == "incoming-changes":
        paths = list(patterns) if patterns else ["docs/specs/**"]
        watch = (
            "  # Git pathspecs: report files under these that change whenever the branch\n"
            "  # moves (a pull, a merge, a rebase or a local commit).\n"
            f"  paths:\n{_list_block(paths)}\n"
            "  # The branch to follow; by default HEAD, whatever is checked out.\n"
            "  # branch: main\n"
        )
        body = (
            "Files under the watched paths changed in the latest update of the branch.\n"
            "Summarise what changed and whether it affects the current work.\n"
        )
    else:
        raise ScaffoldError(
            f'Unknown --type "{source_type}". Choose one of: {", ".join(SOURCE_TYPES)}'
        )
    return header + watch + footer_urgency + body


@dataclass(frozen=True)
class ScaffoldResult:
    created: bool
    monitor_dir: str
    file_path: str


def scaffold_monitor(
    monitors_dir: str,
    monitor_name: str,
    source_type: str,
    *,
    display_name: str | None = None,
    urgency: str | None = None,
    patterns: Sequence[str] = (),
    command: Sequence[str] = (),
) -> ScaffoldResult:
    """Write ``<monitors_dir>/<monitor_name>/MONITOR.md``; never overwrite one."""
    if not MONITOR_NAME.match(monitor_name) or monitor_name == "MONITOR":
        raise ScaffoldError(
            f'Invalid monitor name "{monitor_name}": it becomes the folder name and the '
            "monitor id, so use letters, digits, '-', '_' or '.' and start with a letter or digit"
        )
    if source_type not in SOURCE_TYPES:
        raise ScaffoldError(
            f'Unknown --type "{source_type}". Choose one of: {", ".join(SOURCE_TYPES)}'
        )
    if patterns and source_type not in GLOB_FIELD_BY_TYPE:
        raise ScaffoldError(
            f"--glob is not supported for --type {source_type} (it seeds watch.globs for "
            "file-fingerprint and watch.paths for incoming-changes)"
        )
    if command and source_type != "command-poll":
        raise ScaffoldError(
            f"--command is not supported for --type {source_type} (it seeds watch.command "
            "for command-poll only)"
        )
    monitor_dir = os.path.join(monitors_dir, monitor_name)
    file_path = os.path.join(monitor_dir, "MONITOR.md")
    if os.path.lexists(file_path):
        return ScaffoldResult(False, monitor_dir, file_path)
    text = render_template(
        source_type,
        name=display_name or readable_name(monitor_name) or monitor_name,
        urgency=urgency or "normal",
        patterns=patterns,
        command=command,
    )
    os.makedirs(monitor_dir, exist_ok=True)
    # "x" mode: a file that appeared since the check above is never clobbered.
    try:
        with open(file_path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return ScaffoldResult(False, monitor_dir, file_path)
    return ScaffoldResult(True, monitor_dir, file_path)


def ensure_gitignore(workspace: str) -> str:
    """Make sure ``.gitignore`` ignores the local state; ``created|appended|present``."""
    path = os.path.join(workspace, ".gitignore")
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            content = handle.read()
    except FileNotFoundError:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(GITIGNORE_LINES) + "\n")
        return "created"
    present = {line.strip() for line in content.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if not missing:
        return "present"
    newline = "\r\n" if "\r\n" in content else "\n"
    lead = newline if content and not content.endswith(("\n", "\r")) else ""
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(lead + newline.join(missing) + newline)
    return "appended"

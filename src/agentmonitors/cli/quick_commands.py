"""The commands an agent runs between turns: ``events list``, ``events ack``, ``session list``.

Their work lives here, free of click and typing, so the entry point can run a
well-formed invocation without importing either (:func:`run_quick`); the click commands
in ``cli/events/`` and ``cli/session/`` (which give ``--help``, completion and the usage
errors) call the same functions. Anything the quick parser does not fully understand,
such as ``--help``, an unknown or malformed option or a missing ``--session``, is handed
to click, so errors read exactly as they always did.
"""

from __future__ import annotations

import os

from agentmonitors.cli.daemon_calls import (
    SESSION_HINT,
    DaemonCallFailed,
    ask,
    manual_socket,
)
from agentmonitors.cli.output import (
    clean_output,
    echo,
    emit,
    print_document,
    print_error,
    resolve_format,
    text_table,
)
from agentmonitors.fastpath.argv import COUNT, FLAG, MULTI, VALUE, Spec, parse_plain
from agentmonitors.untrusted import clean_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Options = dict[str, Any]

# Newest first, so the default page is the most recent activity.
DEFAULT_LIST_LIMIT = 50


class UsageProblem(Exception):
    """A combination of options no command accepts; click reports it as a usage error."""


def answers_from_store(option: str | None, socket: str) -> bool:
    """Whether the workspace database may answer when no daemon does.

    Yes unless ``--socket`` names another daemon than this workspace's: the commands the
    reminders print carry the workspace's own socket, and must work with it down.
    """
    return option is None or socket == manual_socket(None)


# ---------------------------------------------------------------- events list


def events_text(records: list[dict[str, Any]]) -> str:
    if not records:
        return "No events found."
    rows = []
    for record in records:
        summary = record.get("summary") or ""
        detail = f"  {clean_line(summary)}" if summary and summary != record["title"] else ""
        rows.append(
            (
                record["id"],
                clean_line(record["monitorId"]),
                record["urgency"],
                record.get("deliveryState", "unread"),
                clean_line(record["title"]) + detail,
            )
        )
    return text_table(("ID", "Monitor", "Urgency", "State", "Title"), rows)


def scope_pairs(raw: str) -> dict[str, str]:
    """``key=value,key2=value2``; raises ValueError naming the first bad segment."""
    scope = {}
    for segment in raw.split(","):
        key, sep, value = segment.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(
                "expected key=value pairs separated by commas, e.g. filePath=docs/a.md "
                f"(got {segment.strip()!r})"
            )
        scope[key.strip()] = value.strip()
    return scope


# How long ``events list --all`` (or JSON without ``--limit``) waits for its reply.
UNBOUNDED_LIST_TIMEOUT_S = 30.0


def events_list(options: Options) -> int:
    """``events list`` with click's parameter names (``session_id``, ``show_all``, …)."""
    fmt = resolve_format(options.get("output_format"))
    limit = options.get("limit")
    show_all = bool(options.get("show_all"))
    if limit is not None and show_all:
        raise UsageProblem("--limit and --all cannot be used together.")
    cap = None if show_all else limit
    if cap is None and not show_all and fmt != "json":
        # What an agent reads is bounded: a backlog of thousands of events would
        # otherwise land in its context whole. Scripts asking for JSON get everything.
        cap = DEFAULT_LIST_LIMIT
    params = _list_params(options, cap)
    if fmt == "toon":
        # The daemon renders it: its encoder is loaded already, and this process,
        # which an agent runs after every reminder, stays without it.
        params["render"] = "toon"
    try:
        socket = manual_socket(options.get("socket"))
        # An unbounded list is as large as the store: its reply may take longer than
        # the protocol's request timeout to build and send on a busy machine.
        waited = UNBOUNDED_LIST_TIMEOUT_S if cap is None else None
        reply = ask(
            socket,
            "events.list",
            params,
            as_json=fmt == "json",
            timeout_s=waited,
            stored=answers_from_store(options.get("socket"), socket),
        )
    except DaemonCallFailed:
        return 1
    if fmt == "toon" and isinstance(reply, dict) and isinstance(reply.get("rendered"), str):
        echo(clean_output(reply["rendered"]))
        shown, total = reply.get("shown"), reply.get("total")
        if isinstance(shown, int) and isinstance(total, int) and total > shown:
            echo(more_line(total - shown))
        return 0
    # A daemon that predates ``render`` answers the records: they are encoded here.
    records, total = listed_page(reply, cap)
    emit(records, fmt, lambda: events_text(records))
    if total > len(records):
        # JSON stays a bare array (its compatible shape, docs/cli.md): what it left out
        # is a notice.
        echo(more_line(total - len(records)), err=fmt == "json")
    return 0


def _list_params(options: Options, cap: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": options["session_id"]}
    if cap is not None:
        params["limit"] = cap
    for option, key in (("monitor", "monitorId"), ("urgency", "urgency"), ("scope", "scope")):
        if options.get(option):
            params[key] = options[option]
    if "filePath" in (options.get("scope") or {}):
        # A relative filePath is read from where the user stands, then from the project.
        params["cwd"] = os.getcwd()
    if options.get("tags"):
        params["tags"] = list(options["tags"])
    if options.get("unread"):
        params["unreadOnly"] = True
    if options.get("since_baseline"):
        params["sinceBaseline"] = True
    return params


def listed_page(reply: Any, cap: int | None) -> tuple[list[dict[str, Any]], int]:
    """The records to show and how many matched in all.

    A daemon that predates ``limit`` answers the whole array; it is cut here.
    """
    if isinstance(reply, dict) and isinstance(reply.get("events"), list):
        records: list[dict[str, Any]] = reply["events"]
        total = reply.get("total")
        return records, total if isinstance(total, int) else len(records)
    everything: list[dict[str, Any]] = list(reply or [])
    return (everything if cap is None else everything[:cap]), len(everything)


def more_line(count: int) -> str:
    """The closing line of a listing that left older events out."""
    return f"{count} more; use --limit/--all"


# ---------------------------------------------------------------- events ack


def split_ids(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def events_ack(options: Options) -> int:
    session_id = options["session_id"]
    as_json = options.get("output_format") == "json"
    params: dict[str, Any] = {"sessionId": session_id}
    if options.get("event_ids") is not None:
        params["eventIds"] = split_ids(options["event_ids"])
    try:
        socket = manual_socket(options.get("socket"))
        result = ask(
            socket,
            "events.ack",
            params,
            as_json=as_json,
            stored=answers_from_store(options.get("socket"), socket),
        )
    except DaemonCallFailed:
        return 1
    reply: dict[str, Any] = result if isinstance(result, dict) else {"ok": True}
    unknown = reply.get("unknownEventIds")
    printed = print_document(reply, options.get("output_format") or "text")
    if unknown:
        return print_error(
            f"no such event for session {session_id}: {', '.join(unknown)} (the others, if any, "
            f"were acknowledged). See `agentmonitors events list --session {session_id}`; "
            + SESSION_HINT
        )
    if not printed:
        echo(ack_text(reply))
    return 0


def _events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"


def ack_text(reply: dict[str, Any]) -> str:
    """What was acknowledged, and what an in-flight delivery kept unread."""
    acknowledged = reply.get("acknowledged")
    if not isinstance(acknowledged, int):  # a daemon that predates the counts
        return "Acknowledged events."
    lines = [f"Acknowledged {_events(acknowledged)}."]
    held = reply.get("heldByDelivery")
    if isinstance(held, int) and held:
        them, stays = ("it", "stays") if held == 1 else ("them", "stay")
        lines.append(
            f"{_events(held)} {stays} unread: a delivery in flight holds {them}. Acknowledge "
            f"{them} by id once shown, or run this again after 30 s."
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- session list


def session_list(options: Options) -> int:
    as_json = options.get("output_format") == "json"
    try:
        socket = manual_socket(options.get("socket"))
        records = ask(
            socket,
            "session.list",
            {},
            as_json=as_json,
            stored=answers_from_store(options.get("socket"), socket),
        )
    except DaemonCallFailed:
        return 1
    if print_document(records, options.get("output_format") or "text"):
        pass
    elif not records:
        echo("No sessions found.")
    else:
        echo(sessions_table(records))
    return 0


def sessions_table(records: list[dict[str, Any]]) -> str:
    return text_table(
        ("ID", "Status", "Host", "Identity", "Last active", "Workspace"),
        (
            (
                record["id"],
                record["status"],
                record.get("adapter")
                or "claude-code",  # the adapter a session opened with is its host
                record.get("agentIdentity", ""),
                record.get("lastActiveAt", ""),
                record.get("workspacePath") or "(global)",
            )
            for record in records
        ),
    )


# ---------------------------------------------------------------- without click

# option -> (parameter name, kind, allowed values or None). Kept equal to the click
# declarations by tests/fastpath/test_argv.py.
_SOCKET = ("socket", VALUE, None)
QUICK_OPTIONS: dict[tuple[str, str], Spec] = {
    ("events", "list"): {
        "--session": ("session_id", VALUE, None),
        "--socket": _SOCKET,
        "--monitor": ("monitor", VALUE, None),
        "--urgency": ("urgency", VALUE, ("low", "normal", "high")),
        "--tag": ("tags", MULTI, None),
        "--scope": ("scope", VALUE, None),
        "--unread": ("unread", FLAG, None),
        "--since-baseline": ("since_baseline", FLAG, None),
        "--limit": ("limit", COUNT, None),
        "--all": ("show_all", FLAG, None),
        "--format": ("output_format", VALUE, ("text", "json", "toon")),
    },
    ("events", "ack"): {
        "--session": ("session_id", VALUE, None),
        "--socket": _SOCKET,
        "--event-ids": ("event_ids", VALUE, None),
        "--format": ("output_format", VALUE, ("text", "json", "toon")),
    },
    ("session", "list"): {
        "--socket": _SOCKET,
        "--format": ("output_format", VALUE, ("text", "json", "toon")),
    },
}
# What click would fill in for an option not given (the ack default is text, not auto).
_DEFAULTS: dict[tuple[str, str], Options] = {
    ("events", "ack"): {"output_format": "text"},
    ("session", "list"): {"output_format": "text"},
}
_REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {
    ("events", "list"): ("session_id",),
    ("events", "ack"): ("session_id",),
}


def quick_parse(command: tuple[str, str], args: list[str]) -> Options | None:
    """The options of a plain invocation, or None for anything click should judge."""
    return parse_plain(
        QUICK_OPTIONS[command],
        args,
        defaults=_DEFAULTS.get(command),
        required=_REQUIRED.get(command, ()),
    )


def quick_options(command: tuple[str, str], args: list[str]) -> Options | None:
    """What the command's function is called with, or None when click must parse."""
    options = quick_parse(command, args)
    if options is not None and options.get("scope") is not None:
        try:
            options["scope"] = scope_pairs(options["scope"])
        except ValueError:
            return None
    return options


_RUNNERS: dict[tuple[str, str], Callable[[Options], int]] = {
    ("events", "list"): events_list,
    ("events", "ack"): events_ack,
    ("session", "list"): session_list,
}


def run_quick(command: tuple[str, str], args: list[str]) -> int | None:
    """Run ``command`` without click, or None when click must parse ``args``."""
    if command not in QUICK_OPTIONS or any(
        key.endswith("_COMPLETE") for key in os.environ if key.startswith("_")
    ):
        return None
    options = quick_options(command, args)
    if options is None:
        return None
    try:
        return _RUNNERS[command](options)
    except UsageProblem:
        return None
    except BrokenPipeError:
        return 1

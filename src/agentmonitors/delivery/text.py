"""Text primitives shared by the delivery transports (docs/architecture.md, "Text and sizes").

Sanitizers, shell-path quoting, code-point cuts and the fixed phrases. Python strings
are sequences of code points, so every slice here already lands on a code-point
boundary; lengths and caps are counted in code points.

Runs on the hook path of every prompt and tool call: standard library only, and
nothing imported at module level.
"""

from __future__ import annotations

from agentmonitors.delivery.vocabulary import REMINDER
from agentmonitors.untrusted import clean_block, clean_line, escape_invisible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CHANNEL_DEFERRED_MARKER",
    "DIFF_ELISION_MARKER",
    "HOOK_LEAD_LINE",
    "HOOK_PREFIX",
    "MAX_ADDITIONAL_CONTEXT",
    "MAX_CHANNEL_CONTENT",
    "MAX_EVENT_DIFF",
    "MAX_UNTRUSTED_FIELD",
    "REMINDER",
    "ack_all_command",
    "ack_line",
    "bound_diff",
    "channel_action_step",
    "channel_cut_marker",
    "channel_deferred_marker",
    "counted_cut",
    "cut",
    "diff_command",
    "diff_elided",
    "diff_elision_marker",
    "escape_shell_path",
    "follow_up_step",
    "hook_action_step",
    "hook_cut_marker",
    "hook_deferred_marker",
    "hook_recap_marker",
    "inline",
    "list_command",
    "sanitize_channel",
    "sanitize_channel_own",
    "sanitize_hook",
    "sanitize_meta",
    "truncate_counted",
    "untrusted_field",
]

MAX_ADDITIONAL_CONTEXT = 4000
"""Cap on the hook's ``additionalContext``, markers included (code points)."""
MAX_EVENT_DIFF = 800
"""Cap on one event's change summary, elision marker included (code points)."""
MAX_CHANNEL_CONTENT = 20000
"""Cap on one channel push's ``content``, markers included (code points)."""
MAX_UNTRUSTED_FIELD = 128
"""Untrusted fields in stderr lines are cut to this many code points (+ ``…``)."""

HOOK_PREFIX = "AgentMon: "
HOOK_LEAD_LINE = (
    HOOK_PREFIX + "monitored changes are pending — consider handling them before continuing."
)
DIFF_ELISION_MARKER = "\n… (change summary truncated)"
"""Kept for callers that name it; a delivered diff says how much it cut
(:func:`diff_elision_marker`)."""
CHANNEL_DEFERRED_MARKER = (
    "\n\n(more monitor updates are pending; they will surface on a later poll)"
)
"""C1 without a count (:func:`channel_deferred_marker`)."""

# Channel S: the tag body may hold newlines, never anything that reads as a tag.
_CHANNEL_TABLE = {ord(char): " " for char in "<>[]\r"}
# Meta values become tag attributes: newlines and ';' go too.
_META_TABLE = {ord(char): " " for char in "<>[]\r\n;"}
# After JSON-encoding an untrusted field: what JSON leaves raw but a terminal or a
# log reader may not (C1 controls, the JS line separators, lone surrogates).
_UNTRUSTED_ESCAPES = {
    code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000))
}
_PATH_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-")


def sanitize_hook(value: str) -> str:
    """The hook transport's ``S``: the untrusted-text rule for a block (``untrusted.py``:
    invisible characters escaped, no line that reads as ours; ``<>[];`` are kept)."""
    return clean_block(value)


def sanitize_channel(value: str) -> str:
    """The channel transport's ``S``: the block rule, then each of ``<>[]\\r`` a space."""
    return clean_block(value).translate(_CHANNEL_TABLE)


def sanitize_channel_own(value: str) -> str:
    """The channel's ``S`` for text we wrote (a reminder, a recap): escaped, not quoted."""
    return escape_invisible(value).translate(_CHANNEL_TABLE)


def sanitize_meta(value: str) -> str:
    """Channel ``meta`` values: the line rule, then each of ``<>[]\\r\\n;`` a space, trimmed."""
    return clean_line(value).translate(_META_TABLE).strip()


def inline(value: str) -> str:
    """An untrusted value inside one of our lines (a session id in a command): the line
    rule, so it can neither break the line nor hide a character."""
    return clean_line(value)


def _path_bytes(char: str) -> bytes:
    try:
        return char.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:  # an undecodable byte of a real path (os.fsdecode) maps back to itself
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return char.encode("utf-8", "surrogatepass")


def escape_shell_path(path: str) -> str:
    """A shell word that expands to exactly ``path`` and holds no tag-breaking byte.

    ``'path'`` when every character is in ``[A-Za-z0-9/._-]``; otherwise bash/zsh
    ANSI-C quoting, ``$'…'``, with every other character written as ``\\xNN`` per
    UTF-8 byte (so quotes, spaces, ``<>[]``, backticks and controls never appear raw).
    """
    if all(char in _PATH_SAFE for char in path):
        return f"'{path}'"
    parts: list[str] = []
    for char in path:
        if char in _PATH_SAFE:
            parts.append(char)
        else:
            parts.extend(f"\\x{byte:02x}" for byte in _path_bytes(char))
    return "$'" + "".join(parts) + "'"


def cut(value: str, limit: int) -> str:
    """At most ``limit`` code points of ``value`` (a prefix; never a partial code point)."""
    return value[: max(0, limit)]


def counted_cut(
    length: int, cap: int, marker: Callable[[int], str], most: int | None = None
) -> tuple[int, str]:
    """``(kept, marker)``: how much of a text of ``length`` code points to keep so that it
    and ``marker(left out)`` fit in ``cap``, and that marker.

    The marker counts what it leaves out, so its length depends on how much is kept
    (docs/architecture.md, "Text and sizes"). Keeping nothing gives the longest count:
    start there, then keep more while a shorter count makes room. Each step's marker is
    no longer than the one it was sized with, so every step fits. ``most`` bounds the
    count (the update's own characters, when a header of ours comes before them).
    """

    def left(kept: int) -> int:
        return length - kept if most is None else min(most, length - kept)

    kept = 0
    text = marker(left(kept))
    while True:
        wider = min(length, max(0, cap - len(text)))
        if wider <= kept:
            return kept, text
        kept = wider
        text = marker(left(kept))


def truncate_counted(value: str, cap: int, marker: Callable[[int], str]) -> str:
    """``value`` unchanged when it fits in ``cap``; else cut so that it plus
    ``marker(characters left out)`` fit."""
    if len(value) <= cap:
        return value
    kept, closing = counted_cut(len(value), cap, marker)
    return cut(value, kept) + closing


def diff_command(monitor_id: str, object_key: str, event_id: str) -> str:
    """The backticked read-only command that shows one event's change whole (each value
    quoted so that no character of it is shown raw)."""
    return (
        f"`agentmonitors diff {escape_shell_path(monitor_id)} --object"
        f" {escape_shell_path(object_key)} --to {escape_shell_path(event_id)} --all`"
    )


def diff_elision_marker(left_out: int, command: str = "") -> str:
    """The line closing a cut change summary: how much it left out, and where it is whole."""
    where = f"; {command} shows it whole" if command else ""
    # Grouped digits, as every count of a cut is shown; the cut is sized for the longest.
    return f"\n… ({left_out:,} more characters of this change{where})"


def diff_elided(diff: str) -> bool:
    """Whether a diff ends with the line of a bounded diff (``… N more … elided``)."""
    last = diff[diff.rfind("\n") + 1 :]
    return last.startswith("… ") and " more " in last and "elided" in last


def bound_diff(diff: str, command: str = "") -> str:
    """A change summary bounded to :data:`MAX_EVENT_DIFF`, elision marker included.

    The marker counts the characters it left out and names ``command``, which shows the
    change whole. Its length depends on that count, so the cut is sized by
    :func:`counted_cut`: the text stays within the cap, and fills it.
    """
    if command and diff_elided(diff):
        # The diff itself was bounded when it was computed; its last line says how much
        # it left out, and this one where to see the rest.
        closing = f"\n({command} shows it whole)"
        if len(diff) + len(closing) <= MAX_EVENT_DIFF:
            return diff + closing
    elif len(diff) <= MAX_EVENT_DIFF:
        return diff
    kept, closing = counted_cut(
        len(diff), MAX_EVENT_DIFF, lambda left_out: diff_elision_marker(left_out, command)
    )
    return cut(diff, kept) + closing


def _socket_clause(socket_path: str) -> str:
    # Without a socket there is nothing truthful to advertise; never print `--socket ''`.
    return f" --socket {escape_shell_path(socket_path)}" if socket_path else ""


def list_command(session_id: str, socket_path: str) -> str:
    """``<LIST>``: the backticked unread listing; ``session_id`` must be sanitized already."""
    return (
        f"`agentmonitors events list --session {session_id}{_socket_clause(socket_path)} --unread`"
    )


def ack_all_command(session_id: str, socket_path: str) -> str:
    """The backticked ack-all command of the hook's action step (``session_id`` sanitized)."""
    return f"`agentmonitors events ack --session {session_id}{_socket_clause(socket_path)}`"


def ack_line(session_id: str, socket_path: str, event_ids: list[str]) -> str:
    """The body claim's per-delivery ack line, naming exactly ``event_ids`` (raw ids)."""
    ids = f" --event-ids {inline(','.join(event_ids))}" if event_ids else ""
    return (
        "When handled, acknowledge: agentmonitors events ack --session "
        f"{inline(session_id)}{_socket_clause(socket_path)}{ids}"
    )


def follow_up_step(session_id: str) -> str:
    """The read-only verbs a reminder points at (leading space included); ``session_id``
    must be sanitized already. They mark nothing read, so looking closer is free."""
    return (
        " To look closer without marking anything read: "
        f"`agentmonitors summary|snapshot|diff MONITOR --session {session_id}`;"
        f" what is still held: `agentmonitors inspect --session {session_id}`."
    )


def hook_action_step(session_id: str, socket_path: str) -> str:
    """The hook's action step (leading space included); ``session_id`` is raw."""
    sid = inline(session_id)
    return (
        f" Run {list_command(sid, socket_path)} to see them, then "
        f"{ack_all_command(sid, socket_path)} once handled." + follow_up_step(sid)
    )


def channel_action_step(session_id: str, socket_path: str) -> str:
    """The channel's action step (leading space included); ``session_id`` is raw."""
    sid = sanitize_meta(session_id)
    return (
        f" Run {list_command(sid, socket_path)} to see them, then call "
        "the agentmon_ack tool with the event_id values of the ones you handled."
        + follow_up_step(sid)
    )


def _pending(count: int | None) -> str:
    """``N more monitor updates are pending`` (no count when the caller does not know it)."""
    if count is None:
        return "more monitor updates are pending"
    return f"{count} more monitor update{' is' if count == 1 else 's are'} pending"


def hook_deferred_marker(session_id: str, socket_path: str, pending: int | None = None) -> str:
    """M1: whole blocks were deferred and stay pending (``pending``: how many)."""
    listing = list_command(inline(session_id), socket_path)
    return f"\n\n[truncated — {_pending(pending)}; run {listing} to see the rest]"


def _characters(count: int, of: str = "this update") -> str:
    """``1,234 more characters of this update`` (grouped digits, as a reader counts)."""
    return f"{count:,} more character{'' if count == 1 else 's'} of {of}"


def _left_out(count: int | None) -> str:
    """``: N more characters of this update were left out`` (``""`` for an unknown count)."""
    if count is None:
        return ""
    return f": {_characters(count)} {'was' if count == 1 else 'were'} left out"


def hook_cut_marker(session_id: str, socket_path: str, left_out: int | None = None) -> str:
    """M2: this claim's own content was cut, ``left_out`` characters of it (says nothing
    about the commit's outcome)."""
    listing = list_command(inline(session_id), socket_path)
    return (
        "\n\n[truncated — this update was too large to show in full"
        f"{_left_out(left_out)}; the full copy stays unread — run {listing} to see it now]"
    )


def hook_recap_marker(
    session_id: str,
    socket_path: str,
    pending: int | None = None,
    cut_chars: int | None = None,
    cut_of: str = "the update it shows",
) -> str:
    """M3: any cut in a ``post-compact`` recap (replaces M1 and M2); ``pending``: how many
    unacknowledged updates it did not show; ``cut_chars``: how many characters it cut
    from what it shows (``cut_of`` names that text)."""
    listing = list_command(inline(session_id), socket_path)
    # A recap that only cut what it shows has nothing "not shown" to count.
    counted = pending is not None and (pending > 0 or cut_chars is None)
    parts = [f"{pending} not shown"] if counted else []
    if cut_chars is not None:
        parts.append(_characters(cut_chars, cut_of))
    left_out = f" ({', and '.join(parts)})" if parts else ""
    return (
        f"\n\n[truncated — not everything fit in this recap{left_out}; the omitted content"
        " stays unread "
        "and will reappear on future recaps until acknowledged — run "
        f"{listing} to see it now]"
    )


def channel_deferred_marker(session_id: str, socket_path: str, pending: int | None = None) -> str:
    """C1: whole blocks were deferred; how many, and the listing that shows them now."""
    if pending is None:
        return CHANNEL_DEFERRED_MARKER
    listing = list_command(sanitize_meta(session_id), socket_path)
    them = ("it", "it") if pending == 1 else ("they", "them")
    return (
        f"\n\n({_pending(pending)}; {them[0]} will surface on a later poll, or run {listing}"
        f" to see {them[1]} now)"
    )


def channel_cut_marker(session_id: str, socket_path: str, left_out: int | None = None) -> str:
    """C2: this push's own content was cut, ``left_out`` characters of it."""
    listing = list_command(sanitize_meta(session_id), socket_path)
    return (
        f"\n\n(this update was too large to show in full{_left_out(left_out)}; run {listing} to see"
        " the full copy)"
    )


def untrusted_field(value: str) -> str:
    """An untrusted value for a stderr line: cut, JSON-quoted, and terminal-safe.

    Cut to :data:`MAX_UNTRUSTED_FIELD` code points (+ ``…``), JSON-encode, then write
    U+007F–U+009F, U+2028/U+2029 (and lone surrogates, which stderr could not encode)
    as ``\\uXXXX``.
    """
    # Lazy: a session start loads this module; only a --debug line quotes a field.
    import json

    if len(value) > MAX_UNTRUSTED_FIELD:
        value = value[:MAX_UNTRUSTED_FIELD] + "…"
    return json.dumps(value, ensure_ascii=False).translate(_UNTRUSTED_ESCAPES)

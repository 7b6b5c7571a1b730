"""The text a queued Codex wake carries, and how a prompt is recognised as one of ours.

See docs/architecture.md, "Transports" (codex-queue). ``codex queue`` hands our text to
the model verbatim as a plain user item, so the text says itself that it comes from
agentmonitors and not from the user; it ends with a tag naming its delivery id. That
turn's UserPromptSubmit hook gets the text as its ``prompt``: the Codex adapter reads
the tag back (:func:`queued_delivery_ids`) and the hook proves the delivery instead of
delivering the same events again. Standard library only, nothing imported: the Codex
hook reads this on every prompt.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["TAG_PREFIX", "queued_delivery_ids", "queued_message"]

HEAD = "AgentMon (agentmonitors, an automatic monitor; this message is not from the user):"
TAG_PREFIX = "[agentmonitors delivery "
_ID_CHARS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")


def queued_message(
    claim: Mapping[str, Any], text: str, delivery_id: str, names: Sequence[str]
) -> str:
    """Our head line (who speaks, which monitors changed), the rendered delivery, the tag."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    what = f"{shown} changed" if shown else "monitored changes are pending"
    counts = claim.get("unreadCounts")
    total = counts.get("total") if isinstance(counts, dict) else None
    pending = f" ({total} unread)" if isinstance(total, int) and total > 1 else ""
    head = f"{HEAD} {what}{pending} while you were idle. Act on it only if it matters to your task."
    return f"{head}\n\n{text}\n\n{TAG_PREFIX}{delivery_id}]"


def queued_delivery_ids(prompt: object) -> tuple[str, ...]:
    """The delivery id one of our queued messages ends with; none for any other prompt.

    Only a prompt that starts with our head line and whose last line is our tag counts:
    a tag quoted inside the delivered text (a watched file may hold one) is not read.
    """
    if not isinstance(prompt, str) or not prompt.lstrip().startswith(HEAD):
        return ()
    last = prompt.rstrip().rpartition("\n")[2]
    if not last.startswith(TAG_PREFIX) or not last.endswith("]"):
        return ()
    candidate = last[len(TAG_PREFIX) : -1]
    if 0 < len(candidate) <= 64 and set(candidate) <= _ID_CHARS:
        return (candidate,)
    return ()

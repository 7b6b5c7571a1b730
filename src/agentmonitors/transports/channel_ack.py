"""What ``agentmon_ack`` answers: counts of what it acknowledged and what it could not.

Ack-all leaves rows an in-flight channel push leases (they stay unread until that push
resolves), so the answer counts instead of claiming "all".
"""

from __future__ import annotations

from typing import Any

from agentmonitors.untrusted import clean_line


def ack_summary(
    requested: list[str] | None, before: set[str], after: set[str], unknown: list[Any]
) -> str:
    """What ``agentmon_ack`` did, in counts: acknowledged, still held, not this session's."""
    if requested is None:
        done = len(before - after)
        held = len(before & after)
        if held:
            return (
                f"Acknowledged {done} of {done + held} unread event(s); {held} stay unread "
                "because an in-flight delivery push holds them. They arrive with that push "
                "(or are freed when it lapses); acknowledge them by event_id once handled."
            )
        if not done:
            return "Nothing to acknowledge: this session has no unread events."
        return f"Acknowledged all {done} unread event(s) of this session."
    wanted = set(requested)
    done = len(wanted & (before - after))
    held = len(wanted & after)
    text = f"Acknowledged {done} of {len(wanted)} event(s)."
    if held:
        text += f" {held} stay unread (held by an in-flight delivery push)."
    if unknown:
        ignored = clean_line(", ".join(map(str, unknown)))
        text += f" Not projected to this session (ignored): {ignored}."
    already = len(wanted) - done - held - len(set(map(str, unknown)) & wanted)
    if already > 0:
        text += f" {already} were already acknowledged."
    return text

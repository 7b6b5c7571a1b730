"""What ``daemon start`` and ``daemon status`` say of the idle reaping."""

from __future__ import annotations

from agentmonitors.runtime.human import human_duration


def reaping_text(reap_after_ms: int | None) -> str:
    if reap_after_ms is None:
        return "unknown"
    if reap_after_ms <= 0:
        return "disabled"
    return f"stops after {human_duration(reap_after_ms)} idle"

"""How a ``verify`` run is shown: the final text, and progress while it runs.

Progress goes to stderr: a live rich display on a terminal (each stage's mark, the
elapsed time and the budget left), plain ``[verify] `` lines otherwise, one per
stage change, so logs and CI output stay readable.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table

from agentmonitors.diagnosis.verify_result import Stage, VerifyResult

GLYPHS = {"pass": "✓", "fail": "✗", "pending": "·", "skip": "-"}
STAGE_WIDTH = 11


def render_text(result: VerifyResult) -> str:
    lines = [f"agentmonitors verify: {result.monitor_id}"]
    for stage in result.stages:
        row = f"  {GLYPHS.get(stage.status, '?')} {stage.name:<{STAGE_WIDTH}} {stage.detail}"
        lines.append(row.rstrip())
    if result.ok:
        seconds = result.elapsed_ms / 1000
        lines.append(f"PASS  {result.monitor_id} delivers end-to-end ({seconds:.1f}s)")
        lines.append("")
        lines.append(result.additional_context or "")
    else:
        failed = next((stage.name for stage in result.stages if stage.status == "fail"), "setup")
        message = result.failure.message if result.failure is not None else "not delivered"
        lines.append(f"FAIL  {failed} — {message}")
        if result.failure is not None and result.failure.kind == "daemon-died":
            lines.append("")
            lines.append("daemon output:")
            lines.append(result.daemon_stderr.rstrip() or "(none)")
    return "\n".join(lines)


class PlainProgress:
    """``[verify] <stage>: <status> <detail>`` each time a stage changes."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self._last: dict[str, tuple[str, str]] = {}

    def update(self, stages: list[Stage], elapsed_s: float, remaining_s: float | None) -> None:
        for stage in stages:
            if stage.status == "pending" and not stage.detail:
                continue
            state = (stage.status, stage.detail)
            if self._last.get(stage.name) == state:
                continue
            self._last[stage.name] = state
            left = "" if remaining_s is None else f", {remaining_s:.0f}s of budget left"
            status = "" if stage.status == "pending" else f"{stage.status}: "
            self.stream.write(
                f"[verify] {stage.name}: {status}{stage.detail} ({elapsed_s:.1f}s{left})\n"
            )
            self.stream.flush()


class LiveProgress:
    """A rich live table on the terminal; ``close`` leaves nothing behind."""

    def __init__(self, monitor_id: str) -> None:
        self.monitor_id = monitor_id
        self.live = Live(console=Console(stderr=True), transient=True, auto_refresh=False)
        self.live.start()

    def update(self, stages: list[Stage], elapsed_s: float, remaining_s: float | None) -> None:
        left = "—" if remaining_s is None else f"{remaining_s:.0f}s"
        table = Table(
            title=f"verify {self.monitor_id}  elapsed {elapsed_s:.1f}s  budget left {left}",
            show_header=False,
            box=None,
        )
        for stage in stages:
            table.add_row(GLYPHS.get(stage.status, "?"), stage.name, stage.detail)
        self.live.update(table, refresh=True)

    def close(self) -> None:
        self.live.stop()


def progress_for(monitor_id: str, stream: Any = None) -> PlainProgress | LiveProgress:
    target = stream if stream is not None else sys.stderr
    if getattr(target, "isatty", lambda: False)():
        return LiveProgress(monitor_id)
    return PlainProgress(target)

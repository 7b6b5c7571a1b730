"""A plugin that declares only the ``Source`` protocol works everywhere a bundled one does.

``tests/fixtures/protocol_source`` subclasses nothing of ours; installed as an entry
point, it is validated, scaffolded by ``init``, observed by ``daemon once``, explained,
checked by ``doctor`` (its own ``target_problem``) and proved by ``verify`` through a
real throwaway daemon, all from the protocol and its defaults.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.sources.registry import load_registry
from agentmonitors.sources.traits import SourceTraits
from tests.conftest import CliResult
from tests.fixtures.example_source.install import write_dist_info

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "protocol_source"
MODULE = "agentmonitors_protocol_example"

Run = Callable[..., CliResult]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(FIXTURE / f"{MODULE}.py", site / f"{MODULE}.py")
    write_dist_info(
        site, "agentmonitors-protocol-example", "0.1.0", {"protocol-count": f"{MODULE}:CountSource"}
    )
    monkeypatch.syspath_prepend(str(site))
    # The daemons ``verify`` starts find the plugin as an installed one.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )
    return site


def write_monitor(root: Path, monitor_id: str, folder: str) -> None:
    path = root / ".claude" / "monitors" / monitor_id
    path.mkdir(parents=True, exist_ok=True)
    (path / "MONITOR.md").write_text(
        f"---\nwatch:\n  type: protocol-count\n  folder: {folder}\n  interval: 1s\n---\nCount.\n"
    )


def test_the_registry_completes_a_protocol_only_source_with_the_defaults(plugin: Path) -> None:
    registry = load_registry()
    source = registry.traits("protocol-count")
    assert not isinstance(registry.get("protocol-count"), SourceTraits)
    assert source.name == "protocol-count" and source.stateful
    assert not source.observes_in_place
    assert source.default_interval_ms == SourceTraits.default_interval_ms
    assert source.verify_trigger({"folder": "x"}, "/") is None
    assert source.target_problem({"folder": "nowhere"}, "/") == "its folder nowhere does not exist"


@pytest.mark.slow
def test_validate_init_once_explain_doctor_and_verify(
    plugin: Path, isolated_environment: Path, run_cli: Run
) -> None:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0

    scaffolded = run_cli("init", "scaffolded", "--type", "protocol-count")
    assert scaffolded.code == 0, scaffolded.err
    text = (root / ".claude" / "monitors" / "scaffolded" / "MONITOR.md").read_text()
    assert "type: protocol-count" in text and "folder:" in text
    shutil.rmtree(root / ".claude" / "monitors" / "scaffolded")

    (root / "inbox").mkdir()
    write_monitor(root, "counted", "inbox")
    write_monitor(root, "missing", "nowhere")
    validated = run_cli("validate")
    assert validated.code == 0, validated.out + validated.err

    first = run_cli("daemon", "once", "--format", "json")
    assert first.code == 0, first.err
    assert set(json.loads(first.out)["evaluatedMonitors"]) == {"counted", "missing"}
    (root / "inbox" / "a.txt").write_text("a\n")
    time.sleep(1.1)
    second = run_cli("daemon", "once", "--format", "json")
    assert second.code == 0, second.err
    assert len(json.loads(second.out)["emittedEventIds"]) == 1

    explained = run_cli("monitor", "explain", "counted", "--format", "json")
    assert explained.code == 0, explained.err
    stages = {stage["id"]: stage for stage in json.loads(explained.out)["stages"]}
    assert stages["scheduling"]["details"]["intervalMs"] == 1000

    doctor = run_cli("doctor", "--format", "json")
    rows = {row["id"]: row for row in json.loads(doctor.out)["monitors"]}
    assert rows["missing"]["targetProblem"] == "its folder nowhere does not exist"
    assert "targetProblem" not in rows["counted"]

    # No automatic trigger (the protocol's default): verify says so, and proves the
    # monitor with a command instead.
    no_trigger = run_cli("verify", "counted", "--format", "json")
    assert no_trigger.code != 0
    assert "protocol-count has no automatic trigger" in no_trigger.out
    verified = run_cli(
        "verify", "counted", "--trigger-cmd", "touch inbox/b.txt", "--format", "json"
    )
    assert verified.code == 0, verified.out + verified.err

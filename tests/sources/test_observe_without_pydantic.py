"""Observing with a bundled source loads neither pydantic nor the source's config model.

Each source's module is imported in a fresh interpreter and observes a valid config
twice, with a real change in between (a file, a command's output, a git commit, an HTTP
response); the change must be reported and ``pydantic`` must still be absent from
``sys.modules``. An invalid config still fails with the model's exact message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.base import ModelSource
from agentmonitors.sources.registry import bundled_registry
from tests.sources.test_incoming_changes import GIT_ENV, git

# Runs in the child: observe, apply the change, observe again, report what was loaded.
CHILD = r"""
import asyncio, importlib, json, subprocess, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

module_name, class_name, config, change, workdir = json.loads(sys.argv[1])
body = [b"one"]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body[0])))
        self.end_headers()
        self.wfile.write(body[0])

    def log_message(self, *args):
        pass


if change == "http":
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    config = {**config, "url": f"http://127.0.0.1:{httpd.server_address[1]}/status"}

from agentmonitors.sources.observation import ObservationContext
from agentmonitors.sources.permit import TRUSTED

source = getattr(importlib.import_module(module_name), class_name)()


def observe(state, now_ms):
    context = ObservationContext(state, now_ms, workdir, "m", permit=TRUSTED)
    return asyncio.run(source.observe(config, context))


report = {}
try:
    first = observe(None, 60_000)
    if change == "http":
        body[0] = b"two"
    elif change:
        subprocess.run(change, cwd=workdir, check=True)
    second = observe(first.next_state, 120_000)
    report["observations"] = [o.title for o in first.observations + second.observations]
except ValueError as error:
    report["error"] = str(error)
report["pydantic"] = sorted(m for m in sys.modules if m.split(".")[0].startswith("pydantic"))
print(json.dumps(report))
"""

REWRITE = ["sh", "-c", "echo two > s.txt"]


def observe_in_child(name: str, config: dict[str, Any], change: Any, workdir: Path) -> Any:
    module_name, class_name = {
        "file-fingerprint": ("agentmonitors.sources.file_fingerprint", "FileFingerprintSource"),
        "api-poll": ("agentmonitors.sources.api_poll", "ApiPollSource"),
        "command-poll": ("agentmonitors.sources.command_poll", "CommandPollSource"),
        "schedule": ("agentmonitors.sources.schedule", "ScheduleSource"),
        "incoming-changes": ("agentmonitors.sources.incoming_changes", "IncomingChangesSource"),
    }[name]
    argument = json.dumps([module_name, class_name, config, change, str(workdir)])
    done = subprocess.run(
        [sys.executable, "-c", CHILD, argument],
        capture_output=True,
        text=True,
        check=False,
        env={**GIT_ENV, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "s.txt").write_text("one\n")
    return tmp_path


def test_file_fingerprint_observes_a_change_without_pydantic(workdir: Path) -> None:
    report = observe_in_child("file-fingerprint", {"globs": "*.txt"}, REWRITE, workdir)
    assert report == {"observations": [f"File changed: {workdir / 's.txt'}"], "pydantic": []}


def test_command_poll_observes_a_change_without_pydantic(workdir: Path) -> None:
    config = {"command": ["cat", "s.txt"], "change-detection": {"strategy": "text-diff"}}
    report = observe_in_child("command-poll", config, REWRITE, workdir)
    assert report == {"observations": ["Command output changed: cat s.txt"], "pydantic": []}


def test_schedule_observes_without_pydantic(workdir: Path) -> None:
    config = {"cron": "* * * * *", "label": "Tick"}
    report = observe_in_child("schedule", config, None, workdir)
    assert report == {"observations": ["Tick", "Tick"], "pydantic": []}


def test_api_poll_observes_a_change_without_pydantic(workdir: Path) -> None:
    config = {"method": "GET", "change-detection": {"strategy": "text-diff"}}
    report = observe_in_child("api-poll", config, "http", workdir)
    assert report["pydantic"] == []
    assert [title.split(":")[0] for title in report["observations"]] == ["API response changed"]


def test_incoming_changes_observes_a_commit_without_pydantic(workdir: Path) -> None:
    git(workdir, "init", "-q")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "a.md").write_text("one\n")
    git(workdir, "add", ".")
    git(workdir, "commit", "-qm", "one")
    commit = [
        "sh",
        "-c",
        "echo two > docs/a.md && git -c user.name=t -c user.email=t@t commit -qam two",
    ]
    report = observe_in_child("incoming-changes", {"paths": ["docs"]}, commit, workdir)
    assert report == {
        "observations": ["Incoming change: docs/a.md (modified)"],
        "pydantic": [],
    }


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("file-fingerprint", {"globs": 3}),
        ("command-poll", {"command": "make check"}),
        ("schedule", {"cron": "61 * * * *"}),
        ("api-poll", {"url": "ftp://example.com/"}),
        ("incoming-changes", {"paths": ["docs"], "branch": " "}),
    ],
)
def test_an_invalid_config_fails_with_the_models_message(
    name: str, config: dict[str, Any], workdir: Path
) -> None:
    source = bundled_registry().get(name)
    assert isinstance(source, ModelSource)
    with pytest.raises(ValueError, match=r"^Invalid ") as expected:
        source.checked_config(config)
    report = observe_in_child(name, config, None, workdir)
    assert report["error"] == str(expected.value)
    assert report["error"].startswith(f"Invalid {name} config: watch.")


def test_the_bundled_models_load_on_first_use_and_third_party_spellings_still_work() -> None:
    from agentmonitors.sources import base
    from agentmonitors.sources.base_config import SourceConfig
    from agentmonitors.sources.file_fingerprint import FileFingerprintSource
    from agentmonitors.sources.file_fingerprint.config import FileFingerprintConfig

    # What a source written against the earlier interface imports is still here.
    assert base.SourceConfig is SourceConfig
    assert FileFingerprintSource.config_model is FileFingerprintConfig
    assert FileFingerprintSource().config_model is FileFingerprintConfig
    with pytest.raises(AttributeError):
        base.NoSuchName  # noqa: B018


def test_a_source_that_names_no_model_says_so() -> None:
    class Nameless(ModelSource):
        name = "nameless"
        description = "Has neither config_model nor config_model_ref."

    with pytest.raises(AttributeError, match="neither config_model nor config_model_ref"):
        Nameless().known_keys()

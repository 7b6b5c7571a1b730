"""What the real-client harnesses share: an npm-installed CLI in a cache, run to its end.

Claude Code (``claude_code.py``) and the Codex CLI (``codex_cli.py``) are both npm
packages that the offline tests install, once, into a folder of ``.cache/`` and run as
whole process groups. This module holds the installing, the version probe and the
killing; each harness keeps what is its client's own (flags, environment, outputs).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

INSTALL_TIMEOUT_S = 600.0
VERSION_TIMEOUT_S = 60.0


class NpmInstallFailed(Exception):
    """npm is missing, or installing the package failed; the message says which."""


class TimedOut(Exception):
    """A run outlived its timeout; what it printed until then is kept."""

    def __init__(self, stdout: str, stderr: str, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:.1f}s")
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds


def binary_version(
    path: str, pattern: re.Pattern[str], env_for: Callable[[str], dict[str, str]]
) -> str | None:
    """``<path> --version`` matched by ``pattern``, run with a throw-away HOME
    (``env_for(home)`` builds the environment); None if it does not run."""
    with tempfile.TemporaryDirectory(prefix="client-version-") as home:
        try:
            done = subprocess.run(
                [path, "--version"],
                capture_output=True,
                text=True,
                env=env_for(home),
                cwd=home,
                timeout=VERSION_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    match = pattern.search(done.stdout)
    return match.group(1) if done.returncode == 0 and match else None


def tree_bytes(folder: Path) -> int:
    """Disk use of ``folder``, each hard-linked file counted once."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:  # installers hard-link binaries
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def cached_version(cache: Path, package: str) -> str | None:
    """The version of ``package`` installed under ``cache``, or None."""
    manifest = cache / "node_modules" / package / "package.json"
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


@contextlib.contextmanager
def install_lock(cache: Path) -> Iterator[None]:
    """One installer at a time (pytest-xdist workers share the cache)."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".install.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def npm_install(cache: Path, package: str, version: str) -> float:
    """``npm install <package>@<version>`` into ``cache`` (call under :func:`install_lock`);
    the seconds it took. :class:`NpmInstallFailed` when npm is missing or fails."""
    npm = shutil.which("npm")
    if npm is None:
        raise NpmInstallFailed(f"npm is not installed, so {package}@{version} cannot be")
    started = time.monotonic()
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(cache),
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--fetch-retries=1",
                "--fetch-timeout=120000",  # ms: fail (and skip) soon when offline
                f"{package}@{version}",
            ],
            capture_output=True,
            text=True,
            cwd=cache,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NpmInstallFailed(f"npm install {package}@{version} failed: {error}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise NpmInstallFailed(
            f"npm install {package}@{version} failed (exit {done.returncode}): {tail}"
        )
    return time.monotonic() - started


class Installed(NamedTuple):
    """An npm-installed CLI: its binary, the version it reports, and where it came from
    (``cache``, or ``npm install`` with the seconds and bytes that took)."""

    path: str
    version: str
    origin: str
    seconds: float | None = None
    bytes_on_disk: int | None = None


def cached_or_installed(
    cache: Path,
    package: str,
    version: str,
    binary_name: str,
    probe: Callable[[str], str | None],
) -> Installed:
    """The cached install of ``package`` if it is ``version`` and runs, else a fresh
    ``npm install`` into ``cache``; ``probe`` reads a binary's version (None: it does not
    run). :class:`NpmInstallFailed` when npm is missing, fails, or installs a binary
    that does not run."""
    binary = str(cache / "node_modules" / ".bin" / binary_name)
    with install_lock(cache):
        if cached_version(cache, package) == version and (found := probe(binary)):
            return Installed(binary, found, "cache")
        seconds = npm_install(cache, package, version)
        found = probe(binary)
        if found is None:
            raise NpmInstallFailed(f"{binary} was installed by npm but does not run")
        return Installed(binary, found, "npm install", seconds, tree_bytes(cache))


def kill_group(process: subprocess.Popen[Any]) -> None:
    """End the process group made for ``process`` (its hooks, servers and tools too):
    SIGTERM, a grace of 5 s, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        if sig == signal.SIGTERM:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def run_to_end(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int, str, str, float]:
    """Run ``argv`` with stdin closed in a group of its own, then kill what is left of the
    group: exit code, stdout, stderr and seconds. :class:`TimedOut` after ``timeout``."""
    started = time.monotonic()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,  # a client reading a prompt from stdin would wait on it
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        stdout, stderr = process.communicate()
        raise TimedOut(stdout, stderr, time.monotonic() - started) from None
    finally:
        kill_group(process)
    return process.returncode, stdout, stderr, time.monotonic() - started

"""Read-only git plumbing for the incoming-changes source.

Every call runs the ``git`` executable with an argument vector (never a shell) as an
asyncio subprocess, so the event loop never blocks, under a timeout and an output
ceiling. User-controlled refs follow ``--end-of-options``. The environment is scrubbed
of the variables that would point git at another repository (a daemon started from a
git hook inherits ``GIT_DIR``), and git is told never to prompt, take optional locks or
fetch missing objects: remotes are never contacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Sequence
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.sources.permit import Permit

GIT_TIMEOUT_S = 30.0
# Large enough for monorepo diffs and big text files (docs/compatibility.md).
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
_STDERR_KEEP = 8 * 1024
_CHUNK = 64 * 1024
_POSIX = hasattr(os, "killpg")

# ``git rev-parse --local-env-vars``: what makes git ignore the folder it runs in.
_REPOSITORY_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_DIR",
    "GIT_GRAFT_FILE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_NAMESPACE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_OBJECT_DIRECTORY",
    "GIT_PREFIX",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_WORK_TREE",
)
_FIXED_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "LC_ALL": "C",
}

_OBJECT_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


class GitError(RuntimeError):
    """git could not be run, timed out, or said something we cannot use."""


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def message(self) -> str:
        """git's complaint, one line (its last non-empty stderr line)."""
        lines = [line.strip() for line in self.stderr.decode("utf-8", "replace").splitlines()]
        lines = [line for line in lines if line]
        return lines[-1] if lines else f"git exited with status {self.returncode}"


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One ``git diff --name-status`` record; paths are repo-relative raw bytes."""

    status: str
    path: bytes
    previous_path: bytes | None = None


def is_object_id(text: str) -> bool:
    return bool(_OBJECT_ID.match(text))


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_ENV}
    env = {key: value for key, value in env.items() if not key.startswith("GIT_CONFIG_KEY_")}
    env = {key: value for key, value in env.items() if not key.startswith("GIT_CONFIG_VALUE_")}
    env.update(_FIXED_ENV)
    return env


async def run_git(
    args: Sequence[str | bytes],
    cwd: str,
    *,
    timeout: float = GIT_TIMEOUT_S,
    max_output: int = MAX_OUTPUT_BYTES,
) -> GitResult:
    """Run ``git <args>`` in ``cwd``; ``GitError`` when it cannot finish properly.

    A non-zero exit is *not* an error here: callers read ``returncode``.
    """
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env=_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Its own process group, so a timeout can end whatever git started too:
            # the pipes (and so ``wait``) only close once every holder is gone.
            start_new_session=_POSIX,
        )
    except FileNotFoundError as error:
        if not os.path.isdir(cwd):
            raise GitError(f"repository folder {cwd} does not exist") from error
        raise GitError("the git executable was not found on PATH") from error
    except OSError as error:
        raise GitError(f"cannot run git in {cwd}: {error.strerror or error}") from error

    async def read_stdout() -> bytes:
        assert process.stdout is not None
        chunks: list[bytes] = []
        total = 0
        while chunk := await process.stdout.read(_CHUNK):
            total += len(chunk)
            if total > max_output:
                raise GitError(f"git {_describe(args)} printed more than {_size(max_output)}")
            chunks.append(chunk)
        return b"".join(chunks)

    async def read_stderr() -> bytes:
        assert process.stderr is not None
        tail = b""
        while chunk := await process.stderr.read(_CHUNK):
            tail = (tail + chunk)[-_STDERR_KEEP:]
        return tail

    tasks = (
        asyncio.ensure_future(read_stdout()),
        asyncio.ensure_future(read_stderr()),
        asyncio.ensure_future(process.wait()),
    )
    try:
        async with asyncio.timeout(timeout):
            stdout, stderr, returncode = await asyncio.gather(*tasks)
    except TimeoutError:
        await _kill(process, tasks)
        raise GitError(f"git {_describe(args)} timed out after {timeout:g} s") from None
    except BaseException:
        await _kill(process, tasks)
        raise
    return GitResult(returncode, stdout, stderr)


async def _kill(process: asyncio.subprocess.Process, tasks: Sequence[asyncio.Future[Any]]) -> None:
    """End git (and anything it started), then drain its pipes so ``wait`` can return."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if _POSIX:
            os.killpg(process.pid, signal.SIGKILL)
        elif process.returncode is None:
            process.kill()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            while await stream.read(_CHUNK):
                pass
    await process.wait()


def _size(count: int) -> str:
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count} bytes"


def _describe(args: Sequence[str | bytes]) -> str:
    words = [arg.decode("utf-8", "replace") if isinstance(arg, bytes) else arg for arg in args]
    return next((word for word in words if not word.startswith("-") and "=" not in word), "")


# --------------------------------------------------------------------------- queries


async def ensure_repository(cwd: str, *, permit: Permit, workspace: str | None) -> None:
    """``GitError`` unless ``cwd`` is inside a git repository (work tree or bare).

    Every git observation starts here, so this is where reading the repository is
    checked against the monitor's permit (``NotApproved`` for an unapproved folder
    outside the workspace; sources/permit.py).
    """
    permit.check_read(cwd, workspace)
    if not os.path.isdir(cwd):
        raise GitError(f"repository folder {cwd} does not exist")
    result = await run_git(["rev-parse", "--git-dir"], cwd)
    if result.returncode == 0:
        return
    message = result.message
    if "not a git repository" in message:
        raise GitError(f"{cwd} is not a git repository (set watch.cwd to the repository folder)")
    raise GitError(f"cannot read the git repository at {cwd}: {message}")


async def resolve_commit(cwd: str, ref: str) -> str | None:
    """The commit ``ref`` names, or None when it names none (yet)."""
    result = await run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], cwd
    )
    if result.returncode != 0:
        if result.returncode == 1 or not result.stderr.strip():
            return None
        raise GitError(f"cannot resolve {ref!r}: {result.message}")
    # Older gits echo the ``--end-of-options`` marker before the object id.
    lines = [
        line.strip()
        for line in result.stdout.decode("ascii", "replace").splitlines()
        if line.strip() and line.strip() != "--end-of-options"
    ]
    return lines[-1] if lines and is_object_id(lines[-1]) else None


async def symbolic_head(cwd: str) -> str | None:
    """The full name of the branch HEAD is on (``refs/heads/main``); None when detached."""
    result = await run_git(["symbolic-ref", "--quiet", "HEAD"], cwd)
    if result.returncode != 0:
        return None
    name = result.stdout.decode("utf-8", "replace").strip()
    return name or None


async def commit_exists(cwd: str, object_id: str) -> bool:
    result = await run_git(["cat-file", "-e", f"{object_id}^{{commit}}"], cwd)
    return result.returncode == 0


async def is_ancestor(cwd: str, ancestor: str, descendant: str) -> bool:
    result = await run_git(["merge-base", "--is-ancestor", ancestor, descendant], cwd)
    if result.returncode in (0, 1):
        return result.returncode == 0
    raise GitError(f"cannot compare {ancestor[:12]} with {descendant[:12]}: {result.message}")


async def changed_paths(
    cwd: str, from_ref: str, to_ref: str, pathspecs: Sequence[str]
) -> list[DiffEntry]:
    """What changed between two commits under ``pathspecs`` (relative to ``cwd``)."""
    result = await run_git(
        [
            "-c",
            "core.quotePath=false",
            "diff",
            "-z",
            "--name-status",
            "--no-ext-diff",
            "--no-relative",
            "--find-renames",
            "--end-of-options",
            f"{from_ref}..{to_ref}",
            "--",
            *pathspecs,
        ],
        cwd,
    )
    if result.returncode != 0:
        raise GitError(f"git diff {from_ref[:12]}..{to_ref[:12]} failed: {result.message}")
    return parse_name_status(result.stdout)


def parse_name_status(output: bytes) -> list[DiffEntry]:
    """Parse ``git diff -z --name-status``: ``R``/``C`` records carry two paths."""
    tokens = output.split(b"\0")
    entries: list[DiffEntry] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token:
            index += 1
            continue
        status = token[:1].decode("ascii", "replace")
        if status in ("R", "C"):
            old = tokens[index + 1] if index + 1 < len(tokens) else b""
            new = tokens[index + 2] if index + 2 < len(tokens) else b""
            if new:
                entries.append(DiffEntry(status, new, old or None))
            index += 3
        else:
            path = tokens[index + 1] if index + 1 < len(tokens) else b""
            if path:
                entries.append(DiffEntry(status, path))
            index += 2
    return entries


async def blob_text(cwd: str, commit: str, path: bytes) -> str | None:
    """The file's text at ``commit``; None when binary, not a blob, or unreadable."""
    try:
        result = await run_git(["cat-file", "blob", commit.encode("ascii") + b":" + path], cwd)
    except GitError:
        return None
    if result.returncode != 0 or b"\0" in result.stdout:
        return None
    return result.stdout.decode("utf-8", "replace")

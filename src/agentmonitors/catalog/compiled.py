"""Compiled definitions: each MONITOR.md's parse outcome kept on disk between processes.

Parsing a monitor costs a YAML parser and the pydantic models, far more than the
short commands that need the result (``validate``, ``daemon once``). An entry holds
one file's outcome as JSON (the plain definition, or the failure) and, for a bundled
source, the source-config errors and warnings ``validate`` reports. It is used only
while the file's bytes (sha256), its path and scope, and our code (the version and
the size and mtime of the modules that decide parsing and checking) are all unchanged;
anything else is a miss that parses again and rewrites the entry. Plugin sources'
checks are never stored: their code changes without the fingerprint knowing.
A definition whose watch block holds a credential (a URL's password, an ``env``
token) is never stored either: it is parsed from its file each time, so the secret
stays in the one file its author put it in.

Entries live in ``$XDG_CACHE_HOME/agentmonitors/compiled`` (else
``~/.cache/agentmonitors/compiled``), one owner-only file per monitor file, written
atomically; an unreadable or damaged entry is a miss. ``AGENTMONITORS_NO_CACHE=1``
turns the cache off. See docs/architecture.md, "Compiled definitions".
"""

from __future__ import annotations

import functools
import json
import os

from agentmonitors import __version__
from agentmonitors.fastpath.digests import sha256
from agentmonitors.monitor import parse as monitor_parse
from agentmonitors.monitor.parse import (
    ParseFailure,
    ParseOutcome,
    parse_monitor,
    parse_monitor_file,
)
from agentmonitors.monitor.policy import LineTable, MonitorDefinition, MonitorPolicy
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.registry import BUNDLED_SOURCES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentmonitors.monitor.discovery import Scope

NO_CACHE_VARIABLE = "AGENTMONITORS_NO_CACHE"
ENTRY_FORMAT = 1
# Past this many entries, a new one first prunes those of vanished files, then the oldest.
MAX_ENTRIES = 1_000

Checked = tuple[list[str], list[str]]

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _unlink_quietly(path: str) -> None:
    # Not contextlib.suppress: contextlib costs a short command (validate) an import.
    try:  # noqa: SIM105
        os.unlink(path)
    except OSError:
        pass


def cache_enabled() -> bool:
    return os.environ.get(NO_CACHE_VARIABLE, "").strip() in ("", "0")


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "agentmonitors", "compiled")


def _package_files(package: str) -> list[str]:
    """The modules whose code decides a parse outcome or a bundled source's checks."""
    files = [
        os.path.join(package, "catalog", "validation.py"),
        os.path.join(package, "catalog", "compiled.py"),
    ]
    for folder in ("monitor", "sources"):
        try:
            with os.scandir(os.path.join(package, folder)) as entries:
                files += [entry.path for entry in entries if entry.name.endswith(".py")]
        except OSError:
            continue
    return sorted(files)


def fingerprint_of(package: str) -> str:
    """Our version plus each deciding module's size and mtime (cheap stats, no reads):
    an edited checkout never reads an entry written by other code."""
    digest = sha256(__version__.encode())
    for path in _package_files(package):
        try:
            info = os.stat(path)
        except OSError:
            continue
        relative = os.path.relpath(path, package)
        digest.update(f"\0{relative}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """This process's fingerprint, taken once: the code in memory is what it describes."""
    return fingerprint_of(PACKAGE_DIR)


def _outcome_json(outcome: ParseOutcome) -> dict[str, Any] | None:
    """The outcome as an entry stores it; None when its lines cannot be kept."""
    lines: Any = None
    if outcome.lines is not None:
        table = getattr(outcome.lines, "table", None)
        found = table() if callable(table) else None
        if not isinstance(found, dict):
            return None
        lines = LineTable(found).as_json()
    if isinstance(outcome, ParseFailure):
        return {
            "kind": "failure",
            "error": outcome.error,
            "id": outcome.id,
            "watchRaw": outcome.watch_raw,
            "warnings": list(outcome.warnings),
            "lines": lines,
        }
    return {
        "kind": "definition",
        "id": outcome.id,
        "policy": outcome.frontmatter.as_authored(),
        "body": outcome.body,
        "watchRaw": outcome.watch_raw,
        "warnings": list(outcome.warnings),
        "lines": lines,
    }


def _outcome_of(data: Any, path: str, scope: Scope | None) -> ParseOutcome:
    """Rebuild a stored outcome; ``KeyError``/``TypeError``/``ValueError`` when damaged."""
    lines = None if data["lines"] is None else LineTable.from_json(data["lines"])
    warnings = tuple(str(text) for text in data["warnings"])
    watch_raw = data["watchRaw"]
    if watch_raw is not None and not isinstance(watch_raw, dict):
        raise TypeError("watchRaw is not a mapping")
    if data["kind"] == "failure":
        return ParseFailure(path, str(data["error"]), data["id"], scope, watch_raw, lines, warnings)
    if data["kind"] != "definition" or watch_raw is None:
        raise ValueError("unknown entry kind")
    return MonitorDefinition(
        id=str(data["id"]),
        file_path=path,
        frontmatter=MonitorPolicy.from_authored(data["policy"]),
        body=str(data["body"]),
        watch_raw=watch_raw,
        scope=scope,
        warnings=warnings,
        lines=lines,
    )


def _same(restored: ParseOutcome, outcome: ParseOutcome) -> bool:
    """JSON keeps everything a monitor's YAML can say but a few oddities (integer keys,
    sets, binary): an outcome that does not come back equal is not stored."""
    if restored != outcome or restored.watch_raw != outcome.watch_raw:
        return False
    return restored.warnings == outcome.warnings


def _holds_credential(outcome: ParseOutcome) -> bool:
    """Whether the outcome carries a credential: in its watch block (a URL's password,
    an ``env`` token, ``auth.password``) or quoted in its parse error."""
    # Lazy: only a miss writes, and redaction loads urllib, which a hit never needs.
    from agentmonitors.sources.redact import config_credentials, looks_like_credential

    if config_credentials(outcome.watch_raw or {}):
        return True
    return isinstance(outcome, ParseFailure) and looks_like_credential(outcome.error)


def _source_of(outcome: ParseOutcome) -> str | None:
    if isinstance(outcome, MonitorDefinition):
        return outcome.source_name
    watch = outcome.watch_raw
    kind = watch.get("type") if watch is not None else None
    return kind if isinstance(kind, str) else None


class CompiledDefinitions:
    """Parse outcomes and bundled-source checks, from disk when the file is unchanged."""

    def __init__(
        self,
        registry: SourceRegistry,
        directory: str | None = None,
        fingerprint: str | None = None,
    ) -> None:
        self.registry = registry
        self.enabled = cache_enabled()
        self.directory = directory or cache_dir()
        self._fingerprint = fingerprint
        # The checks of each outcome this object handed out, by file.
        self._checks: dict[str, tuple[ParseOutcome, Checked]] = {}

    def _entry_path(self, path: str, scope: str | None) -> str:
        name = sha256(f"{scope}\0{path}".encode()).hexdigest()[:40]
        return os.path.join(self.directory, f"{name}.json")

    def parse(self, file_path: str, scope: Scope | None = None) -> ParseOutcome:
        """The file's outcome, as :func:`parse_monitor_file` would give it."""
        path = os.path.abspath(file_path)
        if not self.enabled:
            return parse_monitor_file(path, scope)
        try:
            text = monitor_parse.read_monitor_text(path)
        except (OSError, UnicodeDecodeError):
            # The parser words these failures; they are not worth storing.
            return parse_monitor_file(path, scope)
        key = {
            "format": ENTRY_FORMAT,
            "path": path,
            "scope": scope,
            # Valid UTF-8 decodes and encodes back to the very bytes of the file.
            "sha256": sha256(text.encode("utf-8")).hexdigest(),
            "code": self._fingerprint or code_fingerprint(),
        }
        entry_path = self._entry_path(path, scope)
        restored = self._read(entry_path, key, path, scope)
        if restored is not None:
            return restored
        outcome = parse_monitor(text, path, scope)
        self._write(entry_path, key, outcome)
        return outcome

    def _read(
        self, entry_path: str, key: dict[str, Any], path: str, scope: Scope | None
    ) -> ParseOutcome | None:
        try:
            with open(entry_path, encoding="utf-8") as handle:
                entry = json.load(handle)
            if not isinstance(entry, dict) or entry.get("key") != key:
                return None
            outcome = _outcome_of(entry["outcome"], path, scope)
            checks = entry.get("checks")
            if checks is not None:
                errors = [str(text) for text in checks["errors"]]
                warnings = [str(text) for text in checks["warnings"]]
                self._checks[path] = (outcome, (errors, warnings))
            return outcome
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _bundled(self, outcome: ParseOutcome) -> bool:
        """Whether the outcome's source is the bundled one the fingerprint covers."""
        name = _source_of(outcome)
        if name not in BUNDLED_SOURCES:
            return False
        source = self.registry.get(name)
        package, module = BUNDLED_SOURCES[name][0], type(source).__module__
        # A bundled source's class may live in a module of its package (``api_poll.source``).
        return source is not None and (module == package or module.startswith(package + "."))

    def _write(self, entry_path: str, key: dict[str, Any], outcome: ParseOutcome) -> None:
        stored = _outcome_json(outcome)
        if stored is None or _holds_credential(outcome):
            # Not kept, and an older entry of the file goes: the cache never becomes a
            # second copy of a password the monitor file holds.
            _unlink_quietly(entry_path)
            return
        checks: dict[str, list[str]] | None = None
        if self._bundled(outcome):
            errors, warnings = self.checks(outcome)
            checks = {"errors": errors, "warnings": warnings}
        try:
            text = json.dumps({"key": key, "outcome": stored, "checks": checks})
            restored = _outcome_of(json.loads(text)["outcome"], outcome.file_path, outcome.scope)
        except (TypeError, ValueError, KeyError):
            return
        if not _same(restored, outcome):
            return
        # Lazy: only a miss writes, and an unchanged tree's `daemon once` never does.
        import tempfile

        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            is_new = not os.path.exists(entry_path)
            descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix=".entry-")
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(temporary, entry_path)
            except BaseException:
                _unlink_quietly(temporary)
                raise
            if is_new:
                self._prune()
        except OSError:
            return  # a read-only or full disk only costs the next run a parse

    def _prune(self) -> None:
        """Keep the folder bounded: entries of vanished files go first, then the oldest."""
        with os.scandir(self.directory) as scan:
            entries = [entry for entry in scan if entry.name.endswith(".json")]
        if len(entries) <= MAX_ENTRIES:
            return
        kept: list[tuple[float, str]] = []
        for entry in entries:
            try:
                with open(entry.path, encoding="utf-8") as handle:
                    monitor_path = json.load(handle)["key"]["path"]
                if not os.path.exists(monitor_path):
                    os.unlink(entry.path)
                    continue
                kept.append((entry.stat().st_mtime, entry.path))
            except (OSError, ValueError, KeyError, TypeError):
                _unlink_quietly(entry.path)
        kept.sort()
        for _, path in kept[: max(0, len(kept) - MAX_ENTRIES)]:
            _unlink_quietly(path)

    def forget(self, path: str) -> None:
        """Drop what is held in memory for a file that vanished."""
        self._checks.pop(path, None)

    def checks(self, outcome: ParseOutcome) -> Checked:
        """Source-config errors and warnings (``validate``'s), stored ones when the
        outcome came from an unchanged entry."""
        cached = self._checks.get(outcome.file_path)
        if cached is not None and cached[0] is outcome:
            return list(cached[1][0]), list(cached[1][1])
        # Lazy: a hit never checks, and the checks import the sources' validation models.
        from agentmonitors.catalog.validation import outcome_checks

        errors, warnings = outcome_checks(outcome, self.registry)
        if outcome.file_path:
            self._checks[outcome.file_path] = (outcome, (errors, warnings))
        return list(errors), list(warnings)

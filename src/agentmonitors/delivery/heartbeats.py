"""Transport heartbeats: a record per live transport under ``<data>/agentmonitors/transports``.

Transports write them (a hook at most once a minute unless it delivered, a channel
every few seconds); the daemon's idle reaper and ``doctor`` read them, all through
this one module and its one staleness rule (:func:`is_stale`). Writes are atomic and
best effort; reads never change anything. Standard library only, and no ``typing``:
hooks write here on every delivery.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from agentmonitors import __version__
from agentmonitors.fastpath.digests import sha256_hex
from agentmonitors.fastpath.jsonline import dumps, loads

SCHEMA_VERSION = 1
CHANNEL_TTL_MS = 30_000
CHANNEL_POLL_MS = 3_000
"""How often a channel asks the daemon for a push, unless told otherwise."""
FOLLOW_TTL_MS = 30_000
"""``events follow`` refreshes its record every 10 s; it lives as long as a channel's."""
HOOK_TTL_MS = 86_400_000
FUTURE_TOLERANCE_MS = 5_000
# A hook refreshes its record at most this often unless it delivered something: the
# record lives a day, and every write costs the prompt a few file operations.
HOOK_REFRESH_MS = 60_000
# Records are a few hundred bytes; anything much bigger is not one of ours.
MAX_RECORD_BYTES = 1 << 20


def transports_dir() -> str:
    """``<data root>/agentmonitors/transports``."""
    # Lazy: a hook in a folder that is not enabled imports this module and never asks.
    from agentmonitors.workspace import data_root

    return os.path.join(data_root(), "agentmonitors", "transports")


def record_file_name(transport: str, key: str) -> str:
    safe = "".join(
        char if char.isascii() and (char.isalnum() or char in "._-") else "_" for char in key
    )[:96]
    digest = sha256_hex(key.encode("utf-8", "surrogatepass"))[:8]
    return f"{transport}-{safe or 'unknown'}-{digest}.json"


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to this proleptic Gregorian date."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _parse_own_iso_ms(text: str) -> int | None:
    """Epoch ms of ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (what writers emit), else None.

    A hook that delivered rewrites its record and reads the others to reap stale
    ones; importing ``datetime`` for that cost it more than the rest of the write.
    The arithmetic is ``datetime``'s own, so the result is the same to the ms.
    """
    if len(text) != 24 or text[4:17:3] != "--T::" or text[19] != "." or text[23] != "Z":
        return None
    digits = text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    millis_text = text[20:23]
    if not (digits + millis_text).isdigit() or not (digits + millis_text).isascii():
        return None
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
    if year < 1 or not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
        return None
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _DAYS_IN_MONTH[month - 1] + leap:
        return None
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
    micros = seconds * 10**6 + int(millis_text) * 1000
    return int(micros / 10**6 * 1000)


def _parse_iso_ms(text: object) -> int | None:
    """Epoch ms of an ISO-8601 timestamp, naive meaning UTC (writers always emit ``Z``).

    The same rule as ``agentmonitors.clock.ms_from_iso``, kept here because that module
    costs a hook ``typing``; ``datetime`` is loaded only for a timestamp in another form.
    """
    if not isinstance(text, str):
        return None
    own = _parse_own_iso_ms(text)
    if own is not None:
        return own
    # Lazy: datetime costs the hook; only a timestamp another writer spelled gets here.
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _ttl_ms(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return float(CHANNEL_TTL_MS)
    if value - value == 0 and value >= 0:  # finite (no math import on the hook path)
        return float(value)
    return float(CHANNEL_TTL_MS)


def is_stale(record: dict[str, object], now_ms: int) -> bool:
    """Stale: ``updatedAt`` unparseable, over 5 s in the future, or older than ``ttlMs``.

    The future tolerance absorbs clock skew between processes; beyond it a timestamp
    is more likely corrupt than early, and a corrupt record must not pin a daemon. A
    missing or unusable ``ttlMs`` counts as a channel's (the shortest).
    """
    updated = _parse_iso_ms(record.get("updatedAt"))
    if updated is None or updated - now_ms > FUTURE_TOLERANCE_MS:
        return True
    return now_ms - updated > _ttl_ms(record.get("ttlMs"))


def fresh_until(record: dict[str, object], now_ms: int) -> int | None:
    """The moment a fresh record goes stale (:func:`is_stale`); None when it is already."""
    if is_stale(record, now_ms):
        return None
    updated = _parse_iso_ms(record.get("updatedAt"))
    assert updated is not None  # a record without one is stale
    ttl = _ttl_ms(record.get("ttlMs"))
    return updated + int(min(ttl, 2**53)) + 1


def write_heartbeat(
    transport: str,
    key: str,
    *,
    workspace: str,
    socket_path: str,
    host_session_id: str | None = None,
    session_id: str | None = None,
    ttl_ms: int = HOOK_TTL_MS,
    delivered: bool = False,
    refresh_while_fresh: bool = True,
) -> None:
    """Write (or refresh) this transport's record; failures are ignored.

    ``refresh_while_fresh=False`` (the hook, which runs at every prompt and tool call)
    leaves a fresh record alone unless this run delivered something.
    """
    try:
        _write(
            transport,
            key,
            workspace,
            socket_path,
            (host_session_id, session_id),
            ttl_ms,
            delivered=delivered,
            throttled=not refresh_while_fresh,
        )
    except (OSError, ValueError):
        return


def _write(
    transport: str,
    key: str,
    workspace: str,
    socket_path: str,
    sessions: tuple[str | None, str | None],
    ttl_ms: int,
    *,
    delivered: bool,
    throttled: bool,
) -> None:
    host_session_id, session_id = sessions
    directory = transports_dir()
    target = os.path.join(directory, record_file_name(transport, key))
    now_ms = time.time_ns() // 1_000_000
    if not delivered and throttled and _fresh(target, now_ms):
        return  # checked first: most hooks stop here, before any directory work
    old = os.umask(0o077)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    finally:
        os.umask(old)
    previous = read_record(target)
    record: dict[str, object] = {
        "schemaVersion": SCHEMA_VERSION,
        "transport": transport,
        "pid": os.getpid(),
        "cliPath": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else "",
        "execPath": sys.executable,
        "version": _version(),
        "home": os.path.expanduser("~"),
        "dataRoot": os.path.dirname(os.path.dirname(directory)),
        "workspacePath": workspace,
        "socketPath": socket_path,
        "startedAt": (previous or {}).get("startedAt", _iso(now_ms)),
        "updatedAt": _iso(now_ms),
        "ttlMs": ttl_ms,
    }
    if host_session_id is not None:
        record["hostSessionId"] = host_session_id
    if session_id is not None:
        record["sessionId"] = session_id
    last_delivery = _iso(now_ms) if delivered else (previous or {}).get("lastDeliveryAt")
    if last_delivery is not None:
        record["lastDeliveryAt"] = last_delivery
    temporary = f"{target}.{os.getpid()}"
    _unlink(temporary)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(dumps(record) + "\n")
    os.replace(temporary, target)
    _reap_stale(directory, now_ms, keep=target)


def _fresh(path: str, now_ms: int) -> bool:
    try:
        modified_ms = os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        return False
    return 0 <= now_ms - modified_ms < HOOK_REFRESH_MS


def read_record(path: str) -> dict[str, object] | None:
    """One record, or None when it is missing, unreadable, not ours or not a file.

    No symlinks, and non-blocking so a FIFO dropped in the registry cannot hang a
    reader; then only a regular file of at most :data:`MAX_RECORD_BYTES` is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # vanished or unreadable: a writer is replacing or reaping it
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_RECORD_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) > MAX_RECORD_BYTES:
        return None
    try:
        data = loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schemaVersion") != SCHEMA_VERSION:
        return None
    return data


def read_records() -> list[dict[str, object]]:
    """Every valid record (stale ones included); never writes."""
    directory = transports_dir()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    records = []
    for name in names:
        if name.endswith(".json"):
            record = read_record(os.path.join(directory, name))
            if record is not None:
                records.append(record)
    return records


def session_listening(transport: str, session_id: str, field: str = "sessionId") -> bool:
    """Whether a fresh record of ``transport`` names this AgentMon session (a writer
    that exits removes its record; one that died goes stale within its lifetime);
    ``field="hostSessionId"`` asks about the host's id of a session instead."""
    directory = transports_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    now_ms = time.time_ns() // 1_000_000
    prefix = f"{transport}-"  # as record_file_name spells it
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        record = read_record(os.path.join(directory, name))
        if (
            record is not None
            and record.get("transport") == transport
            and record.get(field) == session_id
            and not is_stale(record, now_ms)
        ):
            return True
    return False


def _reap_stale(directory: str, now_ms: int, keep: str) -> None:
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        if not name.endswith(".json") or path == keep:
            continue
        record = read_record(path)
        if record is not None and is_stale(record, now_ms):
            _unlink(path)


def _version() -> str:
    return __version__


def remove_heartbeat(transport: str, key: str) -> None:
    """Delete this transport's record (a channel on its way out); failures are ignored."""
    _unlink(os.path.join(transports_dir(), record_file_name(transport, key)))


def _unlink(path: str) -> None:
    """Remove a file if it can be; no ``contextlib`` here, for the hook's sake."""
    try:
        os.unlink(path)
    except OSError:
        return

"""Hashes of small inputs (names, paths, a definition's text), through ``hashlib``.

One place for the digests the short commands take, so each names its purpose rather
than an algorithm's module. ``hashlib`` is imported on first use: a hook that hashes
nothing (a folder that is not enabled) never loads it (docs/architecture.md, "Speed").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class HashObject(Protocol):
        def update(self, data: bytes, /) -> None: ...
        def hexdigest(self) -> str: ...
        def digest(self) -> bytes: ...


def sha256(data: bytes = b"") -> HashObject:
    """A sha256 hash object (``update``, ``hexdigest``) seeded with ``data``."""
    import hashlib

    return hashlib.sha256(data)


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data``, as 64 hex digits."""
    return sha256(data).hexdigest()


def blake2b(data: bytes = b"", digest_size: int = 64) -> HashObject:
    """A blake2b hash object, as ``hashlib.blake2b`` makes it."""
    import hashlib

    return hashlib.blake2b(data, digest_size=digest_size)

"""Hashes of small inputs (names, paths, a definition's text) without OpenSSL.

``hashlib`` loads OpenSSL for sha256, which costs a short command (a hook, an
unchanged ``daemon once``) a few milliseconds before its first digest; the interpreter's
own sha256 and blake2 modules do the same digests of a few bytes at no load cost
(docs/architecture.md, "Speed"). Large inputs (a watched file's content) still go
through ``hashlib``, whose OpenSSL sha256 is several times faster per byte.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class HashObject(Protocol):
        def update(self, data: bytes, /) -> None: ...
        def hexdigest(self) -> str: ...
        def digest(self) -> bytes: ...


def _builtin(module_names: tuple[str, ...], name: str) -> Callable[..., HashObject]:
    """The interpreter's own constructor ``name`` (its module was renamed over versions),
    or hashlib's when the interpreter was built without it."""
    for module_name in module_names:
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        made: Callable[..., HashObject] = getattr(module, name)
        return made
    import hashlib

    fallback: Callable[..., HashObject] = getattr(hashlib, name)
    return fallback


def sha256(data: bytes = b"") -> HashObject:
    """A sha256 hash object (``update``, ``hexdigest``) seeded with ``data``."""
    return _builtin(("_sha256", "_sha2"), "sha256")(data)


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data``, as 64 hex digits."""
    return sha256(data).hexdigest()


def blake2b(data: bytes = b"", digest_size: int = 64) -> HashObject:
    """A blake2b hash object, as ``hashlib.blake2b`` makes it."""
    return _builtin(("_blake2",), "blake2b")(data, digest_size=digest_size)

"""Hashes of small inputs (names, paths, a definition's text).

One place for the digests the short commands take, so each names its purpose rather
than an algorithm's module. ``hashlib`` is imported on first use, and a hex sha256 of a
few hundred bytes (a path, an id: all a hook hashes) is computed in plain Python, so a
hook never loads OpenSSL (docs/architecture.md, "Speed").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Protocol

    class HashObject(Protocol):
        def update(self, data: bytes, /) -> None: ...
        def hexdigest(self) -> str: ...
        def digest(self) -> bytes: ...


def _hashlib() -> ModuleType:
    # Lazy: hashlib loads OpenSSL; a hook hashes only small inputs, in plain Python.
    import hashlib

    return hashlib


def sha256(data: bytes = b"") -> HashObject:
    """A sha256 hash object (``update``, ``hexdigest``) seeded with ``data``."""
    hashed: HashObject = _hashlib().sha256(data)
    return hashed


# Inputs up to this size (a path, a session id) are hashed by :func:`_sha256_small`.
SMALL_INPUT_BYTES = 512

# FIPS 180-4, section 4.2.2 and 5.3.3: the round constants and the initial hash value.
_K = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4,
    0xAB1C5ED5, 0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE,
    0x9BDC06A7, 0xC19BF174, 0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F,
    0x4A7484AA, 0x5CB0A9DC, 0x76F988DA, 0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7,
    0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967, 0x27B70A85, 0x2E1B2138, 0x4D2C6DFC,
    0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85, 0xA2BFE8A1, 0xA81A664B,
    0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070, 0x19A4C116,
    0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7,
    0xC67178F2,
)  # fmt: skip
_H0 = (
    0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
    0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
)  # fmt: skip
_MASK = 0xFFFFFFFF


def _sha256_small(data: bytes) -> str:
    """sha256 of a few hundred bytes at most, in plain Python, as 64 hex digits.

    ``hashlib`` loads OpenSSL on import, about 3 ms, which a warm hook would pay for
    the one digest it takes (its workspace's data folder name); hashing a path here
    takes well under a millisecond. ``tests/fastpath/test_digests.py`` checks it against
    ``hashlib`` (docs/architecture.md, "Speed"). Rotations are written out: a call per
    rotation would double the time.
    """
    mask = _MASK
    length = len(data)
    padded = data + b"\x80" + b"\x00" * ((55 - length) % 64) + (length * 8).to_bytes(8, "big")
    state = list(_H0)
    for offset in range(0, len(padded), 64):
        words = [int.from_bytes(padded[i : i + 4], "big") for i in range(offset, offset + 64, 4)]
        for i in range(16, 64):
            x, y = words[i - 15], words[i - 2]
            s0 = ((x >> 7) | (x << 25)) ^ ((x >> 18) | (x << 14)) ^ (x >> 3)
            s1 = ((y >> 17) | (y << 15)) ^ ((y >> 19) | (y << 13)) ^ (y >> 10)
            words.append((words[i - 16] + s0 + words[i - 7] + s1) & mask)
        a, b, c, d, e, f, g, h = state
        for k, w in zip(_K, words, strict=True):
            s1 = ((e >> 6) | (e << 26)) ^ ((e >> 11) | (e << 21)) ^ ((e >> 25) | (e << 7))
            t1 = (h + (s1 & mask) + ((e & f) ^ (~e & g)) + k + w) & mask
            s0 = ((a >> 2) | (a << 30)) ^ ((a >> 13) | (a << 19)) ^ ((a >> 22) | (a << 10))
            t2 = (s0 & mask) + ((a & b) ^ (a & c) ^ (b & c))
            h, g, f, e, d, c, b, a = g, f, e, (d + t1) & mask, c, b, a, (t1 + t2) & mask
        state = [(x + y) & mask for x, y in zip(state, (a, b, c, d, e, f, g, h), strict=True)]
    return "".join(f"{word:08x}" for word in state)


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data``, as 64 hex digits."""
    if len(data) <= SMALL_INPUT_BYTES:
        return _sha256_small(data)
    return sha256(data).hexdigest()


def blake2b(data: bytes = b"", digest_size: int = 64) -> HashObject:
    """A blake2b hash object, as ``hashlib.blake2b`` makes it."""
    hashed: HashObject = _hashlib().blake2b(data, digest_size=digest_size)
    return hashed

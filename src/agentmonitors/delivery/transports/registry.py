"""The transport registry: the bundled transports, then any registered later.

See docs/architecture.md, "Transports". A transport is registered once, by name; one
without a name, a sizing (a packing and a cap) or a doctor check is refused, so every
transport the daemon serves can be sized and diagnosed. The bundled ones load when the
registry is first asked (their renderers are the daemon's, never a hook's).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from agentmonitors.delivery.transports.base import Transport

__all__ = [
    "BUNDLED_TRANSPORTS",
    "register",
    "transport",
    "transport_problem",
    "transports",
    "unregister",
]

BUNDLED_TRANSPORTS = (
    "agentmonitors.delivery.transports.hook",
    "agentmonitors.delivery.transports.channel",
    "agentmonitors.delivery.transports.follow",
    "agentmonitors.delivery.transports.codex_queue",
)
"""Each bundled transport's module, whose ``TRANSPORT`` is registered in this order."""

_REGISTERED: dict[str, Transport] = {}
_LOADED: list[bool] = []
"""Non-empty once the bundled transports are registered."""


def transport_problem(candidate: object) -> str | None:
    """Why ``candidate`` cannot be registered (None: it can)."""
    name = getattr(candidate, "name", None)
    if not isinstance(name, str) or not name:
        return "a transport needs a name"
    if not isinstance(candidate, Transport):
        return f"transport {name!r} does not implement the Transport protocol"
    if candidate.packing is None or not isinstance(candidate.cap, int) or candidate.cap < 1:
        return f"transport {name!r} declares no sizing (a packing and a cap)"
    if not isinstance(candidate.min_cap, int) or not 1 <= candidate.min_cap <= candidate.cap:
        return f"transport {name!r} declares a min_cap outside 1..cap"
    doctor: Callable[..., object] | None = getattr(type(candidate), "doctor", None)
    if doctor is None or not callable(doctor):
        return f"transport {name!r} declares no doctor check"
    return None


def _load_bundled() -> None:
    if _LOADED:
        return
    _LOADED.append(True)
    for module_name in BUNDLED_TRANSPORTS:
        register(importlib.import_module(module_name).TRANSPORT)


def register(candidate: Transport) -> Transport:
    """Add ``candidate``; a ``ValueError`` says why one is refused (a name taken too)."""
    _load_bundled()
    problem = transport_problem(candidate)
    if problem is not None:
        raise ValueError(problem)
    if candidate.name in _REGISTERED:
        raise ValueError(f"transport {candidate.name!r} is already registered")
    _REGISTERED[candidate.name] = candidate
    return candidate


def unregister(name: str) -> None:
    """Remove a transport registered after the bundled ones (a test's, when it ends)."""
    _load_bundled()
    _REGISTERED.pop(name, None)


def transports() -> tuple[Transport, ...]:
    """Every registered transport, bundled first, in registration order."""
    _load_bundled()
    return tuple(_REGISTERED.values())


def transport(name: str) -> Transport:
    """The transport called ``name``; a ``ValueError`` for one nobody registered."""
    _load_bundled()
    found = _REGISTERED.get(name)
    if found is None:
        raise ValueError(f"unknown transport {name!r}")
    return found

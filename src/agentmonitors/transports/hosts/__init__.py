"""Host adapters: one module per agent host, chosen by ``--host`` (see ``base``)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.transports.hosts.base import HostAdapter

DEFAULT_HOST = "claude-code"
HOSTS = ("claude-code", "codex", "cursor")
"""The ``--host`` values, in the order help and errors list them."""

_MODULES = {
    "claude-code": "agentmonitors.transports.hosts.claude_code",
    "codex": "agentmonitors.transports.hosts.codex",
    "cursor": "agentmonitors.transports.hosts.cursor",
}


class UnknownHost(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid value for '--host': {name!r} is not one of "
            + ", ".join(repr(host) for host in HOSTS)
            + "."
        )


def adapter_for(name: str) -> HostAdapter:
    """The adapter of host ``name``; only that host's module is imported."""
    module_name = _MODULES.get(name)
    if module_name is None:
        raise UnknownHost(name)
    # ``__import__`` rather than importlib: the hook path pays for every module.
    adapter: HostAdapter = __import__(module_name, fromlist=["ADAPTER"]).ADAPTER
    return adapter

"""The daemon's wire format: one JSON line each way over a Unix stream socket.

A request is ``{"id":"<unique>","method":"<name>","params":{...}}\\n``; the daemon
answers one line, ``{"id","result"}`` or ``{"id","error"}``, and closes. Requests it
cannot parse or does not know get :data:`UNSUPPORTED_REPLY`, the exact reply an older
daemon sends, so clients of either generation recognise it.

Shared by the blocking client (hook path) and the asyncio server; standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from agentmonitors.fastpath.jsonline import dumps, loads

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


REQUEST_TIMEOUT_S: Final = 2.0
PING_TIMEOUT_S: Final = 0.5
# Startup probe of a socket file left behind: long enough for a busy daemon to accept.
PROBE_TIMEOUT_S: Final = 0.5
# A client that connects and never finishes its line must not hold a task forever.
SERVER_READ_TIMEOUT_S: Final = 5.0
MAX_REQUEST_BYTES: Final = 1 << 20
# Replies can carry whole event lists; the cap only stops a runaway peer eating memory.
MAX_REPLY_BYTES: Final = 256 << 20

UNSUPPORTED_CODE: Final = "unsupported_request"
INVALID_REQUEST_ID: Final = "invalid"
INVALID_REQUEST_MESSAGE: Final = "Invalid JSON request."
UNSUPPORTED_REPLY: Final[Mapping[str, str]] = MappingProxyType(
    {"id": INVALID_REQUEST_ID, "error": INVALID_REQUEST_MESSAGE, "code": UNSUPPORTED_CODE}
)

NO_DAEMON_MESSAGE: Final = (
    "No daemon running for this workspace - start it with `agentmonitors daemon start` "
    "(or it starts automatically when a Claude Code session opens), then run "
    "`agentmonitors daemon status` to see its sessions and events."
)


class Request:
    """One decoded request line."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: str, method: str, params: dict[str, Any]) -> None:
        self.id = id
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r}, params={self.params!r})"


def encode_message(message: Mapping[str, Any]) -> bytes:
    """One compact JSON line, non-ASCII kept as UTF-8.

    ``json.dumps`` escapes newlines inside strings, so the only ``\\n`` is the
    terminator. A lone surrogate cannot be UTF-8; ``backslashreplace`` turns it
    into ``\\udXXX``, which is exactly JSON's own escape for it (surrogates can only
    occur inside string literals). NaN and infinities raise ``ValueError``: they are
    not JSON and a JavaScript peer would choke on them.
    """
    if not isinstance(message, dict):
        message = dict(message)  # json only serialises real dicts (not MappingProxyType)
    text = dumps(message, allow_nan=False)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_json_line(line: bytes) -> Any:
    """Parse one line as strict JSON (UTF-8, no NaN/Infinity); raises ``ValueError``."""
    return loads(line.decode("utf-8"), parse_constant=_reject_constant)


def decode_request(line: bytes) -> Request | None:
    """The request on ``line``, or None when it is not a well-formed request.

    Well-formed: a JSON object with a string ``id``, a string ``method`` and an
    object ``params`` (required, possibly empty). Method names are checked by the
    server, not here.
    """
    try:
        data = decode_json_line(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    request_id = data.get("id")
    method = data.get("method")
    params = data.get("params")
    if not isinstance(request_id, str) or not isinstance(method, str):
        return None
    if not isinstance(params, dict):
        return None
    return Request(request_id, method, params)


def is_unsupported_reply(reply: Mapping[str, Any]) -> bool:
    """An "I don't understand this request" answer, from us or an older daemon."""
    if reply.get("code") == UNSUPPORTED_CODE:
        return True
    return reply.get("id") == INVALID_REQUEST_ID and reply.get("error") == INVALID_REQUEST_MESSAGE

"""The daemon's asyncio IPC server.

One request per connection: read a line, validate, dispatch to a registered
:class:`Method`, write one line, close. Nothing a client sends or fails to send may
take the daemon down: a hang-up, a half line, garbage, a handler crash or an
unencodable result is that one connection's problem.

Startup holds an exclusive ``flock`` on ``<socket>.lock`` for the daemon's whole life,
so two daemons can never both get past startup for one socket, and a SIGKILLed
daemon's lock vanishes with it (no stale pid files to judge).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import stat
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, get_args

from agentmonitors.daemon.process_lock import take_process_lock
from agentmonitors.daemon.protocol import (
    MAX_REQUEST_BYTES,
    PROBE_TIMEOUT_S,
    SERVER_READ_TIMEOUT_S,
    UNSUPPORTED_REPLY,
    decode_request,
    encode_message,
)
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.paths import SocketPathError, folder_problem, prepare_private_dir

logger = logging.getLogger("agentmonitors.daemon")

ParamType = Literal["str", "int", "number", "bool", "list[str]", "dict", "any"]
_PARAM_TYPES: frozenset[str] = frozenset(get_args(ParamType))
Handler = Callable[[dict[str, Any]], Awaitable[Any]]

# Grace for in-flight connections at shutdown, so the `stop` caller gets its reply.
_CLOSE_GRACE_S = 2.0


class RequestError(Exception):
    """Raised by a handler for an application error; the message goes back verbatim."""


class DaemonAlreadyRunning(Exception):
    """Another daemon holds this socket."""

    def __init__(self, socket_path: str) -> None:
        super().__init__(f"AgentMon daemon is already running at {socket_path}.")
        self.socket_path = socket_path


def _refused(socket_path: str, problem: str) -> OSError:
    return SocketPathError(
        f"Refusing to listen at {socket_path}: {problem}. Clients only connect to a socket"
        " you own in a folder only you can write; choose such a place (the default needs"
        " no --socket)."
    )


@dataclass(frozen=True)
class ParamSpec:
    """One accepted parameter. ``choices`` and ``minimum`` narrow str and int values."""

    type: ParamType = "any"
    required: bool = False
    choices: tuple[str, ...] | None = None
    minimum: int | float | None = None

    def __post_init__(self) -> None:
        if self.type not in _PARAM_TYPES:
            raise ValueError(f"unknown parameter type {self.type!r}")


_DESCRIPTIONS: dict[str, str] = {
    "str": "a string",
    "int": "an integer",
    "number": "a number",
    "bool": "a boolean",
    "list[str]": "a list of strings",
    "dict": "an object",
    "any": "present",
}


# Python types accepted in a ``(type, required)`` declaration, and what they mean.
_TYPE_NAMES: dict[object, ParamType] = {
    str: "str",
    int: "int",
    float: "number",
    bool: "bool",
    list: "list[str]",
    list[str]: "list[str]",
    dict: "dict",
    object: "any",
    Any: "any",
}

ParamDeclaration = str | tuple[object, bool] | ParamSpec


def _declared_spec(name: str, declared: ParamDeclaration) -> ParamSpec:
    if isinstance(declared, ParamSpec):
        return declared
    if isinstance(declared, tuple):
        kind_object, required = declared
        kind = _TYPE_NAMES.get(kind_object)
        if kind is None:
            raise ValueError(f"unsupported parameter type {kind_object!r} for {name}")
        return ParamSpec(type=kind, required=bool(required))
    optional = declared.endswith("?")
    kind_name = declared[:-1] if optional else declared
    if kind_name not in _PARAM_TYPES:
        raise ValueError(f"unknown parameter type {kind_name!r} for {name}")
    return ParamSpec(type=kind_name, required=not optional)  # type: ignore[arg-type]


def params(**fields: ParamDeclaration) -> dict[str, ParamSpec]:
    """Declare a method's parameters tersely.

    Each field is ``(python_type, required)`` (``sessionId=(str, True)``), a type
    name with ``?`` for optional (``maxEvents="int?"``), or a :class:`ParamSpec`
    when ``choices`` or ``minimum`` are needed. ``list`` means a list of strings,
    ``float`` any number, ``object`` anything.
    """
    return {name: _declared_spec(name, declared) for name, declared in fields.items()}


@dataclass(frozen=True)
class Method:
    """A handler and the parameters the server checks before calling it."""

    handler: Handler
    params: Mapping[str, ParamSpec] = field(default_factory=dict)
    # Called with the result when its reply could not be written because the client
    # hung up first (it timed out while the daemon was stalled): a method that takes
    # something on the caller's behalf (a delivery lease) gives it back here.
    undelivered: Callable[[Any], None] | None = None


def _check_value(spec: ParamSpec, value: Any) -> tuple[bool, Any]:
    """``(ok, normalised value)``. JSON has one number type: ``5.0`` is a fine int."""
    kind = spec.type
    if kind == "str":
        ok = isinstance(value, str) and (spec.choices is None or value in spec.choices)
    elif kind == "int":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
        ok = ok and (spec.minimum is None or value >= spec.minimum)
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and (spec.minimum is None or value >= spec.minimum)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "list[str]":
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    elif kind == "dict":
        ok = isinstance(value, dict)
    else:
        ok = True
    return ok, value


def _expectation(spec: ParamSpec) -> str:
    if spec.choices is not None:
        return "one of " + ", ".join(spec.choices)
    text = _DESCRIPTIONS[spec.type]
    if spec.minimum is not None:
        text += f" >= {spec.minimum}"
    return text


def validate_params(
    method: str, specs: Mapping[str, ParamSpec], received: dict[str, Any]
) -> dict[str, Any]:
    """The params a handler sees, or :class:`RequestError` naming the first bad field.

    Unknown keys pass through untouched (newer clients may send more). An optional
    parameter sent as ``null`` counts as absent and is dropped, so handlers only test
    ``in``; a required one must be present and non-null.
    """
    checked = dict(received)
    for name, spec in specs.items():
        value = checked.get(name)
        if value is None and (spec.type != "any" or name not in checked):
            if spec.required:
                raise RequestError(
                    f"Invalid params for {method}: {name} must be {_expectation(spec)} "
                    "(it is missing)"
                )
            checked.pop(name, None)
            continue
        ok, normalised = _check_value(spec, value)
        if not ok:
            raise RequestError(f"Invalid params for {method}: {name} must be {_expectation(spec)}")
        checked[name] = normalised
    return checked


async def _ping(_params: dict[str, Any]) -> dict[str, bool]:
    return {"ok": True}


class DaemonServer:
    """Serves ``methods`` on a Unix socket; ``ping`` is built in.

    ``start()`` takes the lock and binds; ``serve_forever()`` runs until
    :meth:`request_stop` (or cancellation) and then closes; ``close()`` is idempotent.
    """

    def __init__(
        self,
        socket_path: str,
        methods: Mapping[str, Method],
        *,
        max_line_bytes: int = MAX_REQUEST_BYTES,
        read_timeout_s: float = SERVER_READ_TIMEOUT_S,
    ) -> None:
        self.socket_path = socket_path
        self.max_line_bytes = max_line_bytes
        self.read_timeout_s = read_timeout_s
        self.methods: dict[str, Method] = {"ping": Method(_ping)}
        self.methods.update(methods)
        # asyncio.Event binds to a loop only on first use, so creating it here is safe.
        self.stopped = asyncio.Event()
        self._lock: Any = None  # the socket's process lock, taken in start()
        self._server: asyncio.Server | None = None
        self._socket_identity: tuple[int, int] | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._started = False
        self._closed = False

    def request_stop(self) -> None:
        """Ask :meth:`serve_forever` to return; in-flight replies still go out."""
        self.stopped.set()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._started:
            raise RuntimeError("server already started")
        self._started = True
        folder = os.path.dirname(os.path.abspath(self.socket_path))
        prepare_private_dir(folder)
        # Clients never connect where someone else could swap the socket
        # (paths.socket_problem), so a daemon listening there would serve nobody.
        problem = folder_problem(folder)
        if problem is not None:
            raise _refused(self.socket_path, problem)
        self._acquire_lock()
        try:
            await self._clear_stale_socket()
            await self._bind()
        except BaseException:
            self._release_lock()
            raise

    def _acquire_lock(self) -> None:
        lock = take_process_lock(self.socket_path + ".lock")
        if lock is None:
            raise DaemonAlreadyRunning(self.socket_path)
        self._lock = lock

    def _release_lock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            with contextlib.suppress(OSError):
                lock.release()

    async def _clear_stale_socket(self) -> None:
        """Remove a socket file nobody answers on; refuse if someone does.

        With the lock held, a live listener can only be a daemon that does not take
        our lock (an older build): it still owns the socket.
        """
        try:
            info = os.lstat(self.socket_path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(info.st_mode):
            raise FileExistsError(
                f"{self.socket_path} exists and is not a socket; refusing to replace it."
            )
        if info.st_uid != os.getuid():
            # Neither probed nor removed: another user's socket is not ours to judge.
            raise _refused(
                self.socket_path,
                f"it is owned by uid {info.st_uid}, not by you (uid {os.getuid()})",
            )
        try:
            _reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.socket_path), PROBE_TIMEOUT_S
            )
        except TimeoutError:
            # Something holds the socket but is too busy to accept: treat it as alive
            # rather than pull the socket from under a working daemon.
            raise DaemonAlreadyRunning(self.socket_path) from None
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)
            return
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
        raise DaemonAlreadyRunning(self.socket_path)

    async def _bind(self) -> None:
        # umask 077 so the socket is never, even briefly, connectable by others; the
        # chmod afterwards is belt and braces for filesystems that ignore the umask.
        previous = os.umask(0o077)
        try:
            self._server = await asyncio.start_unix_server(
                self._on_connection, path=self.socket_path, limit=self.max_line_bytes
            )
        finally:
            os.umask(previous)
        os.chmod(self.socket_path, 0o600)
        info = os.lstat(self.socket_path)
        self._socket_identity = (info.st_dev, info.st_ino)

    async def serve_forever(self) -> None:
        if not self._started:
            await self.start()
        try:
            await self.stopped.wait()
        finally:
            await self.close()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stopped.set()
        server, self._server = self._server, None
        if server is not None:
            server.close()
        pending = {task for task in self._connections if task is not asyncio.current_task()}
        if pending:
            _done, late = await asyncio.wait(pending, timeout=_CLOSE_GRACE_S)
            for task in late:
                task.cancel()
            if late:
                await asyncio.gather(*late, return_exceptions=True)
        if server is not None:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._remove_socket_file()
        # Release only after the socket file is gone, so a successor that takes the
        # lock never has its fresh socket removed by us.
        self._release_lock()

    def _remove_socket_file(self) -> None:
        if self._socket_identity is None:
            return
        try:
            info = os.lstat(self.socket_path)
        except OSError:
            return
        # Someone may have replaced the path (a forced restart); only remove ours.
        if (info.st_dev, info.st_ino) == self._socket_identity:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)

    # ------------------------------------------------------------------ connections

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        undo: Callable[[], None] | None = None
        try:
            answer = await self._read_and_dispatch(reader)
            if answer is not None:
                reply, undo = answer
                writer.write(reply)
                await writer.drain()
                undo = None
        except (ConnectionError, OSError):
            # The client hung up; its request is the only casualty, and whatever the
            # request took for it (see ``Method.undelivered``) is given back.
            if undo is not None:
                self._undo(undo)
        except Exception:
            logger.exception("IPC connection failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if task is not None:
                self._connections.discard(task)

    @staticmethod
    def _undo(undo: Callable[[], None]) -> None:
        try:
            undo()
        except Exception:
            logger.exception("IPC: giving back an undelivered reply's hold failed")

    async def _read_and_dispatch(
        self, reader: asyncio.StreamReader
    ) -> tuple[bytes, Callable[[], None] | None] | None:
        try:
            line = await asyncio.wait_for(reader.readuntil(b"\n"), self.read_timeout_s)
        except asyncio.LimitOverrunError:
            return encode_message(UNSUPPORTED_REPLY), None
        except asyncio.IncompleteReadError as error:
            # EOF before a newline: nothing at all means the client just left; a
            # partial line gets the "can't parse" answer in case it is still reading.
            return (encode_message(UNSUPPORTED_REPLY), None) if error.partial else None
        except TimeoutError:
            return encode_message(UNSUPPORTED_REPLY), None
        return await self._dispatch(line)

    async def dispatch(self, line: bytes) -> bytes:
        """The encoded reply to one request line (exposed for in-process tests)."""
        return (await self._dispatch(line))[0]

    async def _dispatch(self, line: bytes) -> tuple[bytes, Callable[[], None] | None]:
        """The encoded reply, and what undoes the request's hold if it is never read."""
        request = decode_request(line)
        method = None if request is None else self.methods.get(request.method)
        if request is None or method is None:
            return encode_message(UNSUPPORTED_REPLY), None
        try:
            checked = validate_params(request.method, method.params, request.params)
            result = await method.handler(checked)
        except RequestError as error:
            return encode_message({"id": request.id, "error": str(error)}), None
        except Exception as error:
            logger.exception("IPC method %s failed", request.method)
            reply = {"id": request.id, "error": str(error) or type(error).__name__}
            return encode_message(reply), None
        undo = _undo_for(method, request.method, result)
        try:
            return encode_message({"id": request.id, "result": result}), undo
        except (TypeError, ValueError, RecursionError) as error:
            logger.exception("IPC method %s returned a value that is not JSON", request.method)
            if undo is not None:
                self._undo(undo)
            return encode_message(
                {
                    "id": request.id,
                    "error": f"Internal error: {request.method} result is not JSON ({error})",
                }
            ), None


def _undo_for(method: Method, name: str, result: Any) -> Callable[[], None] | None:
    give_back = method.undelivered
    if give_back is None:
        return None

    def undo() -> None:
        logger.warning("IPC: the client of %s hung up before its reply; undoing its hold", name)
        give_back(result)

    return undo

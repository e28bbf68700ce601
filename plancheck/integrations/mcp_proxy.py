"""``plancheck mcp-proxy -- SERVER ...``: an MCP server over stdio that checks each tool call.

The proxy starts the real server and relays MCP's stdio transport (one JSON-RPC message a
line) both ways, each line forwarded unchanged and in order. A ``tools/call`` request is
first put to a :class:`plancheck.Guard`: an allowed call goes on to the server and its result
is recorded (for references between calls and for policies); a refused call never reaches the
server and is answered at once with an MCP tool result whose ``isError`` is true and whose text
is the Guard's feedback, which the model reads and repairs from.

The Guard's pool is the one ``--tools`` names, or else the server's own: before the first
``tools/call`` the proxy asks the server for ``tools/list`` (every page) under a request id of
its own, which the client never sees, and asks again after the server says its tools changed
(``notifications/tools/list_changed``); a server that does not answer within
``PLANCHECK_MCP_TIMEOUT`` seconds (30) gets every call refused with that reason. Messages are
read with the MCP SDK's JSON-RPC types.
What the client sends that is not a JSON-RPC message is forwarded for the server to answer;
when the server exits, every request it has not answered gets an error response, so a client
never waits for an answer that cannot come.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

__all__ = ["McpProxy"]

_OWN_ID_PREFIX = "plancheck-proxy/"
_POOL_TIMEOUT_S = float(os.environ.get("PLANCHECK_MCP_TIMEOUT", "30"))  # for tools/list
_DRAIN_TIMEOUT_S = 30.0
_SERVER_GONE = -32603  # JSON-RPC internal error


class McpProxy:
    """One proxied session (see the module docstring). ``make_guard(tools)`` builds the Guard
    from the server's ``tools/list`` result (``tools`` is None when the pool is known without
    asking the server); it may raise, and then every call is refused with what it raised."""

    def __init__(self, command: list[str], make_guard: Callable[[Any], Any], *,
                 pool_known: bool, client_in: IO[bytes], client_out: IO[bytes],
                 log: IO[str] = sys.stderr) -> None:
        self.command = command
        self.make_guard = make_guard
        self.client_in = client_in
        self.client_out = client_out
        self.log = log
        self.guard: Any = None
        self.guard_problem: str | None = None
        self.pool_known = pool_known
        self._out_lock = threading.Lock()
        self._guard_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[str, str] = {}  # request id (as JSON) -> method, sent to the server
        self._calls: dict[str, str] = {}  # tools/call request id (as JSON) -> guard call id
        self._own: dict[str, tuple[threading.Event, list[Any]]] = {}
        self._server: subprocess.Popen[bytes] | None = None
        self._server_gone = threading.Event()
        self._stopping = False

    # ----------------------------------------------------------------------- running

    def run(self) -> int:
        """Relay until the client closes its input (then the server is stopped); returns 0, or
        2 when the server could not start or exited with an error status on its own."""
        try:
            self._server = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE)
        except OSError as error:
            print(f"plancheck mcp-proxy: cannot start {self.command[0]}: {error.strerror or error}",
                  file=self.log)
            return 2
        reader = threading.Thread(target=self._from_server, name="mcp-proxy-server",
                                  daemon=True)
        reader.start()
        try:
            for line in self.client_in:
                if self._server_gone.is_set():
                    self._answer_gone(line)
                    continue
                self._from_client(line)
            self._drain()
        finally:
            self._stop_server()
            reader.join(timeout=5)
        code = self._server.returncode
        if code is None or code <= 0 or self._stopping:
            return 0  # it ended when the client did (or the proxy stopped it)
        print(f"plancheck mcp-proxy: the MCP server exited with status {code}", file=self.log)
        return 2

    def _drain(self) -> None:
        """Wait (a while) for the answers to what the client asked before it closed its input:
        closing the server's input at once could cut them off."""
        deadline = time.monotonic() + _DRAIN_TIMEOUT_S
        while self._pending and not self._server_gone.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)

    def _stop_server(self) -> None:
        server = self._server
        assert server is not None
        self._stopping = not self._server_gone.is_set()
        if server.stdin is not None:
            with contextlib.suppress(OSError):
                server.stdin.close()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.terminate()
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()

    # ----------------------------------------------------------------------- client -> server

    def _from_client(self, line: bytes) -> None:
        message = _message(line)
        if isinstance(message, dict) and "id" in message and isinstance(message.get("method"),
                                                                        str):
            key = _key(message["id"])
            if message["method"] == "tools/call":
                refusal = self._decide(message, key)
                if refusal is not None:
                    self._to_client(refusal)
                    return
            self._pending[key] = message["method"]
        elif isinstance(message, list):
            print("plancheck mcp-proxy: a JSON-RPC batch is forwarded unchecked (MCP no longer "
                  "has batches)", file=self.log)
        self._to_server(line)

    def _decide(self, message: dict[str, Any], key: str) -> bytes | None:
        """The refusal to send back for a ``tools/call`` request, or None to forward it."""
        if self.guard is None and self.guard_problem is None:
            self._load_guard()
        if self.guard is None:
            return _tool_error(message["id"], "plancheck cannot check this call, so it was not "
                               f"run: {self.guard_problem}")
        with self._guard_lock:
            verdict = self.guard.propose(message)
        if not verdict.allowed:
            return _tool_error(message["id"], verdict.feedback)
        self._calls[key] = verdict.call_id
        return None

    def _load_guard(self) -> None:
        try:
            tools = None if self.pool_known else self._list_tools()
            self.guard = self.make_guard(tools)
        except Exception as error:  # said on every call it leaves unchecked
            self.guard_problem = str(error) or type(error).__name__
            print(f"plancheck mcp-proxy: {self.guard_problem}", file=self.log)

    def _list_tools(self) -> dict[str, Any]:
        """The server's tools (every page of ``tools/list``), asked under the proxy's own ids."""
        tools: list[Any] = []
        cursor: Any = None
        while True:
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            result = self._ask("tools/list", params)
            page = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ValueError(f"the server's tools/list answer holds no tools: {result!r:.200}")
            tools.extend(page)
            cursor = result.get("nextCursor")
            if not cursor:
                return {"tools": tools}

    def _ask(self, method: str, params: dict[str, Any]) -> Any:
        request_id = f"{_OWN_ID_PREFIX}{next(self._ids)}"
        done, answer = threading.Event(), list[Any]()
        self._own[_key(request_id)] = (done, answer)
        self._to_server(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                    "params": params}).encode() + b"\n")
        if not done.wait(_POOL_TIMEOUT_S) or not answer:
            raise TimeoutError(f"the server did not answer {method} within "
                               f"{_POOL_TIMEOUT_S:.0f} s")
        reply = answer[0]
        if "error" in reply:
            raise ValueError(f"the server refused {method}: {reply['error']!r:.200}")
        return reply.get("result")

    # ----------------------------------------------------------------------- server -> client

    def _from_server(self) -> None:
        server = self._server
        assert server is not None and server.stdout is not None
        for line in server.stdout:
            message = _message(line)
            if isinstance(message, dict):
                if "id" in message and "method" not in message:
                    if self._response(message):
                        continue
                elif message.get("method") == "notifications/tools/list_changed" and \
                        not self.pool_known:
                    with self._guard_lock:
                        self.guard, self.guard_problem = None, None  # asked again when needed
            self._to_client(line)
        server.wait()
        self._server_gone.set()
        for key, method in list(self._pending.items()):
            self._to_client(_error(json.loads(key), f"the MCP server exited (status "
                                   f"{server.returncode}) before answering {method}"))
        self._pending.clear()
        for done, _ in self._own.values():
            done.set()

    def _response(self, message: dict[str, Any]) -> bool:
        """Note a response; True when it answers the proxy itself (not to be forwarded)."""
        key = _key(message["id"])
        own = self._own.pop(key, None)
        if own is not None:
            own[1].append(message)
            own[0].set()
            return True
        self._pending.pop(key, None)
        call_id = self._calls.pop(key, None)
        if call_id is not None and self.guard is not None:
            with self._guard_lock:
                self.guard.record(call_id, message.get("result", message.get("error")))
        return False

    def _answer_gone(self, line: bytes) -> None:
        message = _message(line)
        if isinstance(message, dict) and "id" in message and "method" in message:
            self._to_client(_error(message["id"], "the MCP server has exited"))

    # ----------------------------------------------------------------------- writing

    def _to_client(self, line: bytes) -> None:
        with self._out_lock:
            self.client_out.write(line if line.endswith(b"\n") else line + b"\n")
            self.client_out.flush()

    def _to_server(self, line: bytes) -> None:
        server = self._server
        assert server is not None and server.stdin is not None
        try:
            server.stdin.write(line if line.endswith(b"\n") else line + b"\n")
            server.stdin.flush()
        except OSError:  # the server has gone: its reader answers what is pending
            pass


@functools.cache
def _jsonrpc() -> Any:
    """The MCP SDK's reader of one JSON-RPC message (request, notification, response, error)."""
    from mcp.types import JSONRPCMessage
    from pydantic import TypeAdapter

    return TypeAdapter(JSONRPCMessage)


def _message(line: bytes) -> Any:
    """A JSON-RPC message as the MCP SDK reads it (a dict, or a list for a batch), or None."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list):
        return value
    try:
        _jsonrpc().validate_python(value)
    except ValueError:
        return None
    return value


def _key(request_id: Any) -> str:
    return json.dumps(request_id)  # 1 and "1" are different ids


def _tool_error(request_id: Any, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"


def _error(request_id: Any, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": _SERVER_GONE, "message": text}}).encode() + b"\n"

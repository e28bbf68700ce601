"""``plancheck mcp-proxy -- SERVER ...``: an MCP server over stdio that checks each tool call.

The proxy starts the real server and relays MCP's stdio transport both ways. Every message
from the client is read once, strictly (:mod:`.wire`, :mod:`.messages`), and what the server
gets is that message encoded again, so nothing reaches it that the guard did not read; a line
that is not one JSON-RPC message is answered with an error and goes no further. A
``tools/call`` request is put to a :class:`plancheck.Guard`, in order (a large one on a thread
of its own, so it does not hold up other messages): an allowed call goes on to the server with
the arguments the guard judged and its result is recorded; a refused call never reaches the
server and is answered at once with a tool result whose ``isError`` is true and whose text is
the guard's feedback, which the model reads and repairs from.

The guard's pool is the one ``--tools`` names, or else the server's own: before the first
``tools/call`` the proxy asks the server for ``tools/list`` (every page, at most
``max_pages``) under ids no client may use, with the client request's per-request envelope
(protocol 2026-07-28). When the server says its tools changed, the next call reads the pool
again and the trajectory (what policies and provenance know) is kept. A fetch that fails
refuses that call, saying why, and is tried again on the next.

Each request is answered once: by the server, by the proxy's refusal, or, when the server
exits or closes its output, by an error naming that. Signals the proxy gets go on to the
server's process group; when either side closes, the session ends at once.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Final

from plancheck.integrations.mcp import messages, protocol, wire
from plancheck.integrations.mcp.heap import one_arena
from plancheck.integrations.mcp.messages import Kind, error_reply, id_key
from plancheck.integrations.mcp.pool import use_pool
from plancheck.integrations.mcp.server_process import ServerProcess

__all__ = ["DEFAULT_MAX_MESSAGE", "DEFAULT_MAX_PAGES", "McpProxy"]

DEFAULT_MAX_MESSAGE: Final = 64 << 20
DEFAULT_MAX_PAGES: Final = 100
_JUDGED_AT_ONCE: Final = 64 << 10  # bytes: larger calls are judged on their own thread
_GRACE_S: Final = 2.0  # between closing the server's input, SIGTERM and SIGKILL
_FORWARDED_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _pool_timeout() -> float:
    return float(os.environ.get("PLANCHECK_MCP_TIMEOUT", "30"))


class _Asked:
    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: dict[str, Any] | None = None


class McpProxy:
    """One proxied session (see the module docstring). ``make_guard(tools)`` builds the Guard
    from the server's ``tools/list`` result (``tools`` is None when the pool is known without
    asking the server); it may raise, and then the call is refused with what it raised."""

    def __init__(self, command: list[str], make_guard: Callable[[Any], Any], *,
                 pool_known: bool, client_in: IO[bytes], client_out: IO[bytes],
                 log: IO[str] = sys.stderr, max_message: int = DEFAULT_MAX_MESSAGE,
                 max_pages: int = DEFAULT_MAX_PAGES) -> None:
        self.command = command
        self.make_guard = make_guard
        self.pool_known = pool_known
        self.client_in = client_in
        self.client_out = client_out
        self.log = log
        self.max_message = max_message
        self.max_pages = max_pages
        # 96 random bits: no client guesses them, and ids it sends with this prefix are refused
        self.own_prefix = f"plancheck-proxy/{secrets.token_hex(12)}/"
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the maps below
        self._client_lock = threading.Lock()  # (each output its own lock: a server slow to
        self._server_lock = threading.Lock()  # read must not hold up its answers)
        self._pending: dict[str, str] = {}  # client request id key -> method
        # forwarded tools/call id key -> (guard call id, the call as the client sent it)
        self._calls: dict[str, tuple[str, _Sent]] = {}
        self._awaiting_input: dict[str, str] = {}  # the call sent -> its guard call id
        self._cancelled: set[str] = set()
        self._own: dict[str, _Asked] = {}
        self._guard: Any = None
        self._guard_lock = threading.Lock()
        self._stale = True  # the pool is to be read before the next call
        self._judging: queue.Queue[tuple[dict[str, Any], str, int] | None] = queue.Queue()
        self._queued = 0  # calls put on the queue and not yet judged
        self._server: ServerProcess | None = None
        self._gone: str | None = None  # why the server can take no more requests
        self._failure: str | None = None  # a failure of the server that makes the exit 2
        self._ending_since: float | None = None
        self._client_open = True
        self._stopped_by: int | None = None
        self._finished = threading.Event()

    # ----------------------------------------------------------------------- running

    def run(self) -> int:
        """Relay until either side ends; returns 0, or 2 when the server could not start,
        failed, or exited with an error status on its own."""
        one_arena()  # (before the threads start: see heap.py)
        try:
            self._server = ServerProcess(self.command)
        except OSError as error:
            self._say(f"cannot start {self.command[0]}: {error.strerror or error}")
            return 2
        threads = [threading.Thread(target=target, name=name, daemon=True) for target, name in (
            (self._from_server, "mcp-proxy-server"), (self._from_client, "mcp-proxy-client"),
            (self._judge_calls, "mcp-proxy-guard"))]
        for thread in threads:
            thread.start()
        previous = self._forward_signals()
        try:
            while not self._finished.wait(0.05):
                if self._ending_since is not None:
                    self._server.escalate(time.monotonic() - self._ending_since, _GRACE_S)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        code = self._server.popen.wait()
        if self._failure is not None:
            self._say(self._failure)
            return 2
        if code > 0 and self._client_open and self._stopped_by is None:
            self._say(f"the MCP server exited with status {code}")
            return 2
        return 0

    def _forward_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous: dict[int, Any] = {}
        for signum in _FORWARDED_SIGNALS:
            with contextlib.suppress(OSError, ValueError):
                previous[signum] = signal.signal(signum, self._on_signal)
        return previous

    def _on_signal(self, signum: int, _frame: Any) -> None:
        server = self._server
        assert server is not None
        self._stopped_by = signum
        server.signal(signum)
        self._begin_ending()

    def _begin_ending(self) -> None:
        if self._ending_since is None:
            self._ending_since = time.monotonic()

    def _say(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(f"plancheck mcp-proxy: {text}", file=self.log, flush=True)

    # ----------------------------------------------------------------------- client -> server

    def _from_client(self) -> None:
        lines = wire.LineReader(self.client_in.fileno(), self.max_message)
        while True:
            line = lines.read_line()
            if line is None:  # too long
                lines.skip_line()
                self._to_client(error_reply(None, messages.INVALID_REQUEST, (
                    f"a message longer than {self.max_message} bytes is not accepted "
                    "(plancheck mcp-proxy --max-message-size)")))
                continue
            if not line:
                break
            try:
                message = wire.parse(line)
            except wire.ParseFailure as why:
                self._to_client(error_reply(None, messages.PARSE_ERROR, str(why)))
                continue
            size = len(line)
            del line  # (only the parsed message is held from here on)
            self._client_message(message, size)
        self._client_open = False
        self._judging.put(None)  # the calls already sent are still judged, then the end

    def _client_message(self, message: Any, size: int) -> None:
        read = messages.read(message, self.own_prefix)
        if read.kind == Kind.REFUSED:
            if read.reply is not None:
                self._to_client(read.reply)
            self._say(f"a message from the client was not forwarded: {read.reason}")
            return
        if read.kind == Kind.REQUEST:
            key, method = id_key(message["id"]), message["method"]
            with self._lock:
                duplicate = key in self._pending
                if not duplicate and self._gone is None:
                    self._pending[key] = method
            if duplicate:
                self._to_client(error_reply(message["id"], messages.INVALID_REQUEST,
                                            f"the id {key} is already used by a request "
                                            "that has not been answered"))
            elif self._gone is not None:
                self._to_client(error_reply(message["id"], messages.INTERNAL_ERROR,
                                            self._gone))
            elif method == "tools/call":
                self._judge_call(message, key, size)
            else:
                self._to_server(wire.encode_read(message, size))
            return
        if read.kind == Kind.NOTIFICATION and message["method"] == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                key = id_key(params["requestId"])
                with self._lock:  # (a request answered already has nothing to cancel)
                    if key in self._pending:
                        self._cancelled.add(key)
        self._to_server(wire.encode_read(message, size))

    # ----------------------------------------------------------------------- judging calls

    def _judge_call(self, message: dict[str, Any], key: str, size: int) -> None:
        """A small call, when no other is being judged and the pool is read, is judged at
        once (a hand-over to the judging thread costs more than judging it); any other waits
        its turn on that thread, so other messages go on meanwhile."""
        with self._lock:
            at_once = size <= _JUDGED_AT_ONCE and self._queued == 0 and \
                self._guard is not None and (self.pool_known or not self._stale)
            if not at_once:
                self._queued += 1
        if at_once:
            self._judge_one(message, key, size)
        else:
            self._judging.put((message, key, size))

    def _judge_calls(self) -> None:
        while (item := self._judging.get()) is not None:
            self._judge_one(*item)
            with self._lock:
                self._queued -= 1
        self._close_server_input()  # the client has closed: so does the server's input
        self._begin_ending()

    def _judge_one(self, message: dict[str, Any], key: str, size: int) -> None:
        with self._lock:
            if key not in self._pending:
                return  # answered already (the server has gone)
            if key in self._cancelled:  # never sent: the server has nothing to cancel
                self._cancelled.discard(key)
                del self._pending[key]
                return
        try:
            self._judge(message, key, size)
        except Exception as error:  # never a lost request, whatever failed
            self._answer(key, wire.encode(protocol.tool_error(
                message, f"plancheck failed on this call, so it was not run "
                         f"({type(error).__name__}: {error}); please report it")))

    def _judge(self, message: dict[str, Any], key: str, size: int) -> None:
        """Forward the call, or answer it with the guard's refusal (``size``: of the line it
        was read from, which its encoding is written into a buffer of)."""
        sent = _Sent(message)
        if _continues(message):
            with self._lock:
                call_id = self._awaiting_input.pop(sent.signature(), None)
                if call_id is not None:
                    self._calls[key] = (call_id, sent)
            if call_id is not None:  # the retry of a call judged and accepted, unchanged
                self._to_server(wire.encode_read(message, size))
                return
        guard, problem = self._current_guard(message)
        if guard is None:
            self._answer(key, wire.encode(protocol.tool_error(
                message, f"plancheck cannot check this call, so it was not run: {problem}")))
            return
        with self._guard_lock:
            verdict = guard.propose(message)
        if not verdict.allowed:
            self._answer(key, wire.encode(protocol.tool_error(message, verdict.feedback)))
            return
        params = message["params"]
        with self._lock:
            self._calls[key] = (verdict.call_id, sent)
        if isinstance(verdict.arguments, dict) and (
                "arguments" in params or verdict.arguments):
            params["arguments"] = verdict.arguments  # what was judged is what runs
        self._to_server(wire.encode_read(message, size))

    def _current_guard(self, request: dict[str, Any]) -> tuple[Any, str]:
        """The guard over the server's current pool (read now if it changed or was never
        read), or None and why there is none."""
        if self._guard is not None and (self.pool_known or not self._stale):
            return self._guard, ""
        self._stale = False  # (a change announced while reading makes the next call read again)
        try:
            tools = None if self.pool_known else self._list_tools(request)
            with self._guard_lock:
                if self._guard is None:
                    self._guard = self.make_guard(tools)
                else:
                    use_pool(self._guard, tools)
        except Exception as error:
            self._stale = True  # tried again on the next call
            problem = str(error) or type(error).__name__
            self._say(problem)
            return None, problem
        return self._guard, ""

    def _list_tools(self, request: dict[str, Any]) -> dict[str, Any]:
        """The server's tools, every page of ``tools/list``."""
        tools: list[Any] = []
        cursor: Any = None
        for _ in range(self.max_pages):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            envelope = protocol.envelope(request)
            if envelope:
                params["_meta"] = envelope
            result = self._ask("tools/list", params)
            page = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ValueError(f"the server's tools/list answer holds no tools: {result!r:.200}")
            tools.extend(page)
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if not cursor:
                return {"tools": tools}
        raise ValueError(f"the server's tools/list has more than {self.max_pages} pages "
                         "(plancheck mcp-proxy --max-pages)")

    def _ask(self, method: str, params: dict[str, Any]) -> Any:
        request_id = f"{self.own_prefix}{next(self._ids)}"
        asked = _Asked()
        key = id_key(request_id)
        with self._lock:
            if self._gone is not None:
                raise RuntimeError(self._gone)
            self._own[key] = asked
        self._to_server(wire.encode({"jsonrpc": "2.0", "id": request_id, "method": method,
                                     "params": params}))
        timeout = _pool_timeout()
        answered = asked.done.wait(timeout)
        with self._lock:
            self._own.pop(key, None)
        if not answered:
            raise TimeoutError(f"the server did not answer {method} within {timeout:.0f} s")
        reply = asked.reply
        if reply is None:
            raise RuntimeError(self._gone or f"the server did not answer {method}")
        if "error" in reply:
            raise ValueError(f"the server refused {method}: {reply['error']!r:.200}")
        return reply.get("result")

    # ----------------------------------------------------------------------- server -> client

    def _from_server(self) -> None:
        server = self._server
        assert server is not None
        lines = wire.LineReader(server.stdout.fileno(), self.max_message)
        while True:
            line = lines.read_line()
            if line is None:  # too long
                self._failure = (f"the MCP server wrote a message longer than "
                                 f"{self.max_message} bytes (--max-message-size)")
                self._end_server(self._failure)
                return
            if not line:
                break
            self._server_line(line)
        try:
            code: int | None = server.popen.wait(timeout=0.5)
        except Exception:  # subprocess.TimeoutExpired: it closed its output, still running
            code = None
        self._end_server("the MCP server closed its output" if code is None else
                         f"the MCP server exited (status {code})")

    def _server_line(self, line: memoryview) -> None:
        try:
            message = wire.parse(line)
        except wire.ParseFailure as why:
            self._bad_server_line(line, str(why))
            return
        if isinstance(message, dict):
            if "id" in message and "method" not in message:
                self._server_response(message, line)
                return
            if message.get("method") == "notifications/tools/list_changed":
                self._stale = True  # the guard reads the pool again before the next call
        elif isinstance(message, list):
            self._say("the MCP server sent a JSON-RPC batch; it was dropped")
            return
        self._to_client(line)

    def _server_response(self, message: dict[str, Any], line: memoryview) -> None:
        key = id_key(message["id"])
        with self._lock:
            asked = self._own.pop(key, None)
            call_id = self._calls.pop(key, None)
        if asked is not None:
            asked.reply = message
            asked.done.set()
            return
        if call_id is not None and self._guard is not None:
            result = message.get("result", message.get("error"))
            if protocol.needs_input(result):  # not done: the client will send it again
                with self._lock:
                    self._awaiting_input[call_id[1].signature()] = call_id[0]
            else:
                with self._guard_lock:
                    self._guard.record(call_id[0], result)
        if not self._answer(key, line):
            self._say(f"the MCP server answered {key}, which no pending request has; "
                      "the answer was dropped")

    def _bad_server_line(self, line: memoryview, why: str) -> None:
        """A line of the server's that is not JSON-RPC: if it can be seen to answer a pending
        request, that request gets an error naming it; else it is dropped (and said)."""
        try:
            loose = json.loads(str(line, "utf-8", "replace"))
        except (ValueError, RecursionError):
            loose = None
        request_id = loose.get("id") if isinstance(loose, dict) else None
        if messages.valid_id(request_id):
            key = id_key(request_id)
            with self._lock:
                method = self._pending.get(key)
                self._calls.pop(key, None)
            if method is not None and self._answer(key, error_reply(
                    request_id, messages.INTERNAL_ERROR,
                    f"the MCP server's answer to {method} is not valid JSON-RPC: {why}")):
                self._say(f"the MCP server answered {key} with a line that is not valid "
                          f"JSON-RPC: {why}")
                return
        self._say(f"the MCP server wrote a line that is not JSON-RPC ({why}); it was dropped: "
                  f"{bytes(line[:120])!r}")

    def _end_server(self, why: str) -> None:
        """The server takes no more requests: every one not answered gets an error naming
        why, and the session ends."""
        server = self._server
        assert server is not None
        with self._lock:
            self._gone = why
            pending, self._pending = self._pending, {}
            own, self._own = self._own, {}
        for key, method in pending.items():
            self._write_client(error_reply(json.loads(key), messages.INTERNAL_ERROR,
                                           f"{why} before answering {method}"))
        for asked in own.values():
            asked.done.set()
        self._close_server_input()
        self._begin_ending()
        if server.returncode is None:
            with contextlib.suppress(Exception):  # (the main thread escalates meanwhile)
                server.popen.wait(timeout=_GRACE_S * 3)
        self._finished.set()

    # ----------------------------------------------------------------------- writing

    def _answer(self, key: str, reply: bytes | memoryview) -> bool:
        """Answers the pending request ``key`` (False when it is not pending: answered
        already)."""
        with self._lock:
            if self._pending.pop(key, None) is None:
                return False
            self._calls.pop(key, None)
            self._cancelled.discard(key)
        self._write_client(reply)
        return True

    def _to_client(self, line: bytes | memoryview) -> None:
        self._write_client(line)

    def _write_client(self, line: bytes | memoryview) -> None:
        try:
            with self._client_lock:
                wire.write_all(self.client_out.fileno(), line)
        except (OSError, ValueError):  # the client has gone: so does the session
            self._client_open = False
            self._close_server_input()
            self._begin_ending()

    def _close_server_input(self) -> None:
        server = self._server
        assert server is not None
        with self._server_lock:
            server.close_input()

    def _to_server(self, line: bytes | bytearray) -> None:
        server = self._server
        assert server is not None
        try:
            with self._server_lock:  # (closed under this lock too: no write to a reused fd)
                if not server.stdin.closed:
                    wire.write_all(server.stdin.fileno(), line)
        except (OSError, ValueError):  # the server has gone: its reader answers what is pending
            pass


class _Sent:
    """A ``tools/call`` as the client sent it: its tool and arguments, compared only when the
    server asks for input (so encoded only then: ``json.dumps`` of an 8 MB argument, on every
    call, took 40-55 ms, more than the rest of the proxy's work on it). The arguments are
    held, not copied: what the guard runs is a copy when it differs (``replaced``)."""

    __slots__ = ("arguments", "name")

    def __init__(self, request: dict[str, Any]) -> None:
        params = request.get("params")
        self.name, self.arguments = (params.get("name"), params.get("arguments")) \
            if isinstance(params, dict) else (None, None)

    def signature(self) -> str:
        return json.dumps([self.name, self.arguments], sort_keys=True)


def _continues(request: dict[str, Any]) -> bool:
    """Whether a ``tools/call`` answers a server's ``input_required`` (2026-07-28)."""
    params = request.get("params")
    return isinstance(params, dict) and ("requestState" in params or
                                         "inputResponses" in params)

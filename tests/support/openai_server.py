"""A real loopback HTTP server that speaks the OpenAI chat-completions protocol.

Tests drive the planning layer against this server instead of a mocked client
object, so the whole stack (openai library, HTTP, JSON, retries, timeouts) is
exercised exactly as it would be against a hosted endpoint. Answers are
scripted: a FIFO of `Reply` objects, optionally backed by a `responder`
function of the request for planners whose number of calls varies.

    with ScriptedOpenAIServer() as srv:
        srv.enqueue(Reply(status=429))
        srv.enqueue(Reply(content="hello"))
        client = ChatClient(ClientConfig(model="m", base_url=srv.base_url))
        ...
        assert len(srv.requests) == 2
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["Reply", "Responder", "ScriptedOpenAIServer"]

# Status used when a request arrives but nothing was scripted for it. A 4xx is
# deliberate: clients do not retry it, so a test that under-scripts fails fast
# with this message instead of spinning through retries.
EXHAUSTED_STATUS = 418
EXHAUSTED_MESSAGE = "ScriptedOpenAIServer: no scripted reply left for this request"


@dataclass(frozen=True)
class Reply:
    """One scripted answer (one choice, or one whole error response)."""

    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    # Error message for non-200 statuses (OpenAI error envelope).
    error: str | None = None
    # Sleep this long before answering; longer than the client timeout
    # simulates a timeout.
    delay_s: float = 0.0
    # Sent as Retry-After on 429/503 answers; None omits the header.
    retry_after_s: float | None = 0.0
    # Token counts reported in `usage`; None means "estimate from the text".
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # Send this exact body instead of a generated one (malformed-response tests).
    raw_body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        return self.status != HTTPStatus.OK


Responder = Callable[[dict[str, Any]], Reply]


class ScriptedOpenAIServer:
    """Threaded HTTP server on 127.0.0.1 (ephemeral port) with scripted replies."""

    def __init__(
        self,
        *,
        model: str = "scripted-model",
        honour_n: bool = True,
        reject_json_schema: bool = False,
        responder: Responder | None = None,
    ) -> None:
        self.model = model
        self.honour_n = honour_n
        self.reject_json_schema = reject_json_schema
        self.responder: Responder | None = responder
        self._queue: deque[Reply] = deque()
        self._requests: list[dict[str, Any]] = []
        self._request_headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        # Set on stop so that handlers sleeping in a simulated delay wake up.
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        # Handlers may be asleep in a simulated timeout; never block shutdown on them.
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scripting and inspection -----------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed JSON bodies of chat-completion requests received so far."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Headers (lower-cased names) of chat-completion requests received so far."""
        with self._lock:
            return list(self._request_headers)

    # -- request handling (called from handler threads) -------------------

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(body)
            self._request_headers.append(headers)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self.responder
        if responder is not None:
            return responder(body)
        return Reply(status=EXHAUSTED_STATUS, error=EXHAUSTED_MESSAGE)

    def _replies_for(self, body: dict[str, Any]) -> list[Reply]:
        """One reply per choice; a single one when n is not honoured."""
        wanted = _requested_n(body) if self.honour_n else 1
        replies: list[Reply] = []
        for _ in range(wanted):
            reply = self._next_reply(body)
            replies.append(reply)
            if reply.is_error:
                break  # an error answers the whole request
        return replies

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _new_id(self) -> str:
        with self._lock:
            return f"chatcmpl-scripted-{next(self._ids)}"


def _requested_n(body: dict[str, Any]) -> int:
    n = body.get("n")
    return n if isinstance(n, int) and n > 0 else 1


def _estimate_tokens(text: str) -> int:
    # Good enough for usage accounting tests: roughly one token per word.
    return max(1, len(text.split()))


def _prompt_text(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    return " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def _error_payload(status: int, message: str) -> dict[str, Any]:
    kind = "rate_limit_error" if status == HTTPStatus.TOO_MANY_REQUESTS else "invalid_request_error"
    if status >= HTTPStatus.INTERNAL_SERVER_ERROR:
        kind = "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _completion_payload(
    server: ScriptedOpenAIServer, body: dict[str, Any], replies: list[Reply]
) -> dict[str, Any]:
    prompt = _prompt_text(body)
    prompt_tokens = next(
        (r.prompt_tokens for r in replies if r.prompt_tokens is not None),
        _estimate_tokens(prompt),
    )
    completion_tokens = sum(
        r.completion_tokens if r.completion_tokens is not None else _estimate_tokens(r.content)
        for r in replies
    )
    choices = [
        {
            "index": index,
            "message": {"role": "assistant", "content": reply.content},
            "finish_reason": reply.finish_reason,
            "logprobs": None,
        }
        for index, reply in enumerate(replies)
    ]
    return {
        "id": server._new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or server.model,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keep-alive, like real endpoints, so the client's pool is exercised.
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                self._send_json(404, _error_payload(404, f"unknown path {self.path}"))
                return
            model = {"id": server.model, "object": "model", "created": 0, "owned_by": "scripted"}
            self._send_json(200, {"object": "list", "data": [model]})

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._read_body()
                self._send_json(404, _error_payload(404, f"unknown path {self.path}"))
                return
            try:
                body = json.loads(self._read_body() or b"null")
            except json.JSONDecodeError as exc:
                self._send_json(400, _error_payload(400, f"invalid JSON body: {exc}"))
                return
            if not isinstance(body, dict):
                self._send_json(400, _error_payload(400, "request body must be a JSON object"))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            server._record(body, headers)
            self._answer_chat(body)

        def _answer_chat(self, body: dict[str, Any]) -> None:
            if server.reject_json_schema and _wants_json_schema(body):
                message = "response_format json_schema is not supported by this server"
                self._send_json(400, _error_payload(400, message))
                return
            replies = server._replies_for(body)
            server._sleep(max(r.delay_s for r in replies))
            final = replies[-1]
            extra_headers = dict(final.headers)
            if final.raw_body is not None:
                self._send_raw(final.status, final.raw_body.encode(), extra_headers)
            elif final.is_error:
                self._send_error_reply(final, extra_headers)
            else:
                self._send_json(200, _completion_payload(server, body, replies), extra_headers)

        def _send_error_reply(self, reply: Reply, headers: dict[str, str]) -> None:
            throttled = reply.status in (
                HTTPStatus.TOO_MANY_REQUESTS,
                HTTPStatus.SERVICE_UNAVAILABLE,
            )
            if throttled and reply.retry_after_s is not None:
                headers.setdefault("Retry-After", _format_seconds(reply.retry_after_s))
            message = reply.error or HTTPStatus(reply.status).phrase
            self._send_json(reply.status, _error_payload(reply.status, message), headers)

        def _read_body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _send_json(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers or {})

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (simulated timeout); nobody is listening.
                self.close_connection = True

    return Handler


def _wants_json_schema(body: dict[str, Any]) -> bool:
    response_format = body.get("response_format")
    return isinstance(response_format, dict) and response_format.get("type") == "json_schema"


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"

"""What a JSON-RPC message from an MCP client is, read the way the strictest peer reads it.

Servers differ in what they accept: some run a request without ``"jsonrpc": "2.0"``, or one
in a batch, or a ``tools/call`` sent as a notification. The proxy does not guess which server
it talks to: every message it forwards has the one shape JSON-RPC 2.0 and MCP define, and
everything else is answered with an error (or, for a notification, which has no answer, said
on stderr) and not forwarded. So every message that can start a tool call reaches the guard.
"""

from __future__ import annotations

import json
from typing import Any, Final

from plancheck.records import Record

__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "Kind", "Read", "error_reply", "id_key", "read"]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INTERNAL_ERROR: Final = -32603


class Kind:
    REQUEST: Final = "request"
    NOTIFICATION: Final = "notification"
    RESPONSE: Final = "response"
    REFUSED: Final = "refused"


class Read(Record):
    """One client message: its kind, and for a refused one the error to answer (None when
    there is no one to answer, a notification) and the reason."""

    __slots__ = _fields = ("kind", "message", "reply", "reason")

    def __init__(self, kind: str, message: Any, reply: bytes | None = None,
                 reason: str = "") -> None:
        self.kind = kind
        self.message = message
        self.reply = reply
        self.reason = reason


def id_key(request_id: Any) -> str:
    """An id as a key (1 and "1" are different ids): ``json.dumps(request_id)``, spelled
    directly for the ids clients send (an integer, a plain ASCII string), which it is asked
    for two or three times a call: json.dumps took a tenth of the proxy's time on small calls."""
    if type(request_id) is int:
        return str(request_id)
    if type(request_id) is str and request_id.isascii() and request_id.isprintable() and \
            '"' not in request_id and "\\" not in request_id:
        return f'"{request_id}"'
    return json.dumps(request_id)


def valid_id(request_id: Any) -> bool:
    """MCP's ids: a string or an integer (not null, a boolean or a fraction)."""
    return isinstance(request_id, str) or (isinstance(request_id, int) and
                                           not isinstance(request_id, bool))


def error_reply(request_id: Any, code: int, message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": code, "message": message}}).encode() + b"\n"


def _refused(message: Any, reason: str, request_id: Any = None, answer: bool = True) -> Read:
    reply = error_reply(request_id, INVALID_REQUEST, reason) if answer else None
    return Read(Kind.REFUSED, message, reply, reason)


def read(message: Any, reserved_prefix: str) -> Read:
    """The kind of a parsed client message. ``reserved_prefix`` starts the ids of the proxy's
    own requests, which a client may not use."""
    if isinstance(message, list):
        return _refused(message, "a JSON-RPC batch is not accepted (MCP has had none since "
                                 "2025-06-18): send each message on a line of its own")
    if not isinstance(message, dict):
        return _refused(message, "a JSON-RPC message is a JSON object")
    request_id = message.get("id")
    has_id = "id" in message
    answerable = has_id and valid_id(request_id)
    reply_id = request_id if answerable else None
    if message.get("jsonrpc") != "2.0":
        return _refused(message, 'a JSON-RPC 2.0 message has "jsonrpc": "2.0"', reply_id,
                        answer=has_id)
    if has_id and not answerable:
        return _refused(message, "a request id is a string or an integer")
    if isinstance(request_id, str) and request_id.startswith(reserved_prefix):
        return _refused(message, f"ids starting {reserved_prefix!r} are the proxy's own",
                        None)
    method = message.get("method")
    is_response = "result" in message or "error" in message
    if "method" in message:
        if not isinstance(method, str) or is_response:
            return _refused(message, "a request's method is a string, and a request holds no "
                                     "result or error", reply_id, answer=has_id)
        if has_id:
            return Read(Kind.REQUEST, message)
        if not method.startswith("notifications/"):
            # a server may run a notification it does not expect as a request: none is
            # forwarded that MCP does not define as one
            return _refused(message, f"`{method}` sent as a notification (without an id) is "
                                     "not forwarded: MCP's notifications are notifications/...",
                            answer=False)
        return Read(Kind.NOTIFICATION, message)
    if has_id and ("result" in message) != ("error" in message):
        return Read(Kind.RESPONSE, message)
    return _refused(message, "not a JSON-RPC request, notification or response", reply_id,
                    answer=has_id)

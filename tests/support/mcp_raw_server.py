"""A lenient MCP server (raw JSON-RPC over stdio, standard library only) for the proxy's tests.

It reads its input the loosest way real servers do, all at once: lines split on ``\\r`` as well
as ``\\n`` (as Python's text streams do), invalid UTF-8 read as U+FFFD, any nesting depth,
batches, messages without ``"jsonrpc": "2.0"`` or with another version, and ``tools/call``
sent as a notification: it runs every call it can find. So any message the proxy lets
through unchecked shows up in its log: ``RAW_LOG`` names a file that gets a JSON line for
every line received (``{"received": text}``) and every tool run (``{"ran": name, ...}``).

Tools: ``read_secret``, ``send_email(to, body)``, ``write_file(path, content)``, ``refresh``
(sends ``notifications/tools/list_changed`` before answering), ``garble`` (answers with a
line that is not valid UTF-8), ``vanish`` (closes its output and stays), ``spawn`` (starts a
child process in its process group and answers with both pids), ``ask`` (answers
``input_required`` until it is sent again with a ``requestState``). Methods beyond MCP's:
``slow/echo`` is answered a second later, ``never/answer`` never.

Behaviour switches (environment): ``RAW_STALL_FIRST_LIST=S`` answers the first ``tools/list``
after S seconds; ``RAW_INIT_FIRST=1`` refuses ``tools/list`` before ``initialize``;
``RAW_ENDLESS_PAGES=1`` gives every ``tools/list`` page a ``nextCursor``; ``RAW_ENDLESS_LINE=N``
answers ``tools/list`` with a line of N MB that does not end; ``RAW_MODERN=1`` refuses
requests without the 2026-07-28 per-request envelope (as the MCP SDK 2.3 server does on that
version).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

sys.setrecursionlimit(1_000_000)  # any nesting depth, as Node's JSON.parse reads

STRING = {"type": "string"}
TOOLS = [
    {"name": "read_secret", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "send_email", "inputSchema": {
        "type": "object", "properties": {"to": STRING, "body": STRING}, "required": ["to"]}},
    {"name": "write_file", "inputSchema": {
        "type": "object", "properties": {"path": STRING, "content": {}},
        "required": ["path"]}},
    {"name": "refresh", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "garble", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "vanish", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "spawn", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "ask", "inputSchema": {"type": "object", "properties": {"q": STRING}}},
]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
out = sys.stdout.buffer
state = {"lists": 0, "initialized": False}


def log(entry: dict[str, Any]) -> None:
    path = os.environ.get("RAW_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def send(message: Any) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def result(request_id: Any, value: Any) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id: Any, text: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": text}})


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def run_tool(request_id: Any, params: dict[str, Any]) -> None:
    name = params.get("name")
    if name == "ask" and "requestState" not in params:  # 2026-07-28: input first
        result(request_id, {"resultType": "input_required", "requestState": "asked-once"})
        return
    arguments = params.get("arguments")
    shallow = json.dumps(arguments).count("[") < 100  # (the log stays readable by any parser)
    log({"ran": name, "arguments": arguments if shallow else "<deep>", "id": request_id})
    if name == "read_secret":
        value = text_result("the secret is hunter2")
    elif name == "refresh":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        value = text_result("refreshed")
    elif name == "garble":
        out.write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() +
                  b', "result": {"content": [{"type": "text", "text": "\xff"}]}}\n')
        out.flush()
        return
    elif name == "vanish":
        os.close(1)  # (closing sys.stdout leaves the descriptor open)
        time.sleep(60)
        return
    elif name == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        value = text_result(json.dumps({"server": os.getpid(), "child": child.pid}))
    else:
        value = text_result(f"{name} ran")
    if request_id is not None:
        result(request_id, value)


def handle(message: Any) -> None:
    if isinstance(message, list):
        for item in message:
            handle(item)
        return
    if not isinstance(message, dict):
        return
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    modern = os.environ.get("RAW_MODERN") == "1"
    if modern and method not in (None, "server/discover") and \
            VERSION_KEY not in (params.get("_meta") or {}):
        if request_id is not None:
            error(request_id, "missing the per-request _meta envelope")
        return
    if method == "initialize":
        state["initialized"] = True
        result(request_id, {"protocolVersion": params.get("protocolVersion"),
                            "capabilities": {"tools": {"listChanged": True}},
                            "serverInfo": {"name": "raw", "version": "0"}})
    elif method == "tools/list":
        state["lists"] += 1
        lists = state["lists"]
        if os.environ.get("RAW_INIT_FIRST") == "1" and not state["initialized"]:
            error(request_id, "not initialized")
            return
        stall = float(os.environ.get("RAW_STALL_FIRST_LIST", "0"))
        if lists == 1 and stall:
            time.sleep(stall)
        endless = int(os.environ.get("RAW_ENDLESS_LINE", "0"))
        if endless:
            out.write(b'{"jsonrpc": "2.0", "id": 1, "result": "' + b"x" * (endless << 20))
            out.flush()
            time.sleep(60)
        page: dict[str, Any] = {"tools": TOOLS}
        if os.environ.get("RAW_ENDLESS_PAGES") == "1":
            page = {"tools": TOOLS[:1], "nextCursor": f"page-{lists}"}
        result(request_id, page)
    elif method == "tools/call":
        run_tool(request_id, params)
    elif method == "ping":
        result(request_id, {})
    elif method == "slow/echo":  # answered a second later
        time.sleep(1)
        result(request_id, {})
    elif method == "never/answer":
        pass
    elif request_id is not None and method is not None:
        result(request_id, {})


def main() -> None:
    log({"pid": os.getpid()})
    buffer = b""
    while chunk := os.read(0, 1 << 16):
        buffer += chunk
        *lines, buffer = buffer.replace(b"\r", b"\n").split(b"\n")
        for line in lines:
            text = line.decode("utf-8", "replace")
            log({"received": text[:2000]})
            try:
                message = json.loads(text)
            except ValueError:
                continue
            handle(message)


if __name__ == "__main__":
    main()

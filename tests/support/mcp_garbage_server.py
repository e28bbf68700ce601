"""An MCP server (raw JSON-RPC over stdio) that writes a line of garbage before each answer,
and one tool, ``echo``: a server a proxy must relay unchanged, in order, and still guard."""

from __future__ import annotations

import json
import sys

TOOL = {"name": "echo", "description": "Echo a text.", "inputSchema": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message:
        continue  # a notification
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "garbage", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("text")
        result = {"content": [{"type": "text", "text": f"echo {text}"}], "isError": False}
    else:
        result = {}
    print(f"garbage before {message['id']} {{not json", flush=True)
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)

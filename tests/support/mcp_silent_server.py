"""An MCP server that answers ``initialize`` and then nothing: a server that hangs."""

from __future__ import annotations

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {
                "tools": {}}, "serverInfo": {"name": "silent", "version": "0"}}}), flush=True)

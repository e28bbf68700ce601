"""MCP's JSON-RPC requests: ``{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params":
{"name", "arguments": {...}}}``, what an MCP client sends and a proxy or a log records. (The
``params`` alone are a call in the generic shape.)"""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    params = item.get("params")
    if item.get("method") != "tools/call" or not isinstance(params, dict) or \
            not isinstance(params.get("name"), str):
        return None
    base = child(pointer, "params")
    return FoundCall(pointer, "mcp-jsonrpc", params["name"], child(base, "name"),
                     params.get("arguments"),
                     child(base, "arguments") if "arguments" in params else None,
                     call_id=plain_id(item.get("id")))


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


SHAPE = CallShape("mcp-jsonrpc", read, detected=True, order=140, write=write,
                  description="MCP JSON-RPC `tools/call` requests")

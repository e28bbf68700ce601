"""MCP tool pools: a ``tools/list`` result ``{"tools": [{name, description, inputSchema,
outputSchema}]}``, the JSON-RPC response holding one, or a bare list of MCP tools (the
``input_schema`` spelling of Anthropic's tool definitions too)."""

from __future__ import annotations

from typing import Any

from plancheck.corpus.pool_builder import (
    META_TOOL,
    META_TOOLSET,
    PoolBuilder,
    add_signature,
    as_list,
    tool_items,
)
from plancheck.corpus.pool_format import PoolFormat
from plancheck.diagnostics.span import escape_pointer

__all__ = ["FORMAT"]


def sniff(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and \
            "tools" in data["result"]:
        return True  # a JSON-RPC response to tools/list
    items = tool_items(data)
    return bool(items) and any(
        isinstance(i, dict) and ("inputSchema" in i or "input_schema" in i) for i in items or ())


def read(data: Any, builder: PoolBuilder) -> None:
    container, base = data, ""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        container, base = data["result"], "/result"  # a JSON-RPC response
    if isinstance(container, dict):
        meta = container.get("_meta")
        builder.apply_meta(meta.get(META_TOOLSET) if isinstance(meta, dict) else None,
                           f"{base}/_meta/{escape_pointer(META_TOOLSET)}")
        items, base = as_list(container.get("tools")), f"{base}/tools"
    else:
        items = as_list(container)
    for i, item in enumerate(items):
        pointer = f"{base}/{i}"
        if not isinstance(item, dict):
            builder.error(f"tool {i} is not an object", pointer)
            continue
        input_key = "inputSchema" if "inputSchema" in item else "input_schema"
        output_key = "outputSchema" if "outputSchema" in item else "output_schema"
        meta = item.get("_meta")
        add_signature(builder, item.get("name"), pointer, item.get("description"),
                      item.get(input_key, {"type": "object"}), f"{pointer}/{input_key}",
                      item.get(output_key), f"{pointer}/{output_key}",
                      meta.get(META_TOOL) if isinstance(meta, dict) else None)


# Before OpenAI: an MCP tool may also say `parameters`.
FORMAT = PoolFormat("mcp", "MCP tool definitions", sniff, read, outputs_are_fields=True,
                    order=100)

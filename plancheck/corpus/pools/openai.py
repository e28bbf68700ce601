"""OpenAI function tools, as a bare ``tools`` array or wrapped as ``{"tools": [...]}`` (a whole
request body works), in the chat-completions shape ``{"type": "function", "function": {name,
description, parameters}}`` or the Responses-API shape ``{"type": "function", name,
description, parameters}``; other tool types (web search, ...) are skipped."""

from __future__ import annotations

from typing import Any

from plancheck.corpus.pool_builder import (
    META_TOOLS,
    META_TOOLSET,
    PoolBuilder,
    add_signature,
    tool_items,
)
from plancheck.corpus.pool_format import PoolFormat
from plancheck.diagnostics.span import escape_pointer

__all__ = ["FORMAT"]


def sniff(data: Any) -> bool:
    items = tool_items(data)
    return bool(items) and any(
        isinstance(i, dict) and (i.get("type") == "function" or "parameters" in i)
        for i in items or ())


def read(data: Any, builder: PoolBuilder) -> None:
    base = ""
    per_tool: dict[str, Any] = {}
    if isinstance(data, dict):
        meta: dict[str, Any] = data["_meta"] if isinstance(data.get("_meta"), dict) else {}
        builder.apply_meta(meta.get(META_TOOLSET), f"/_meta/{escape_pointer(META_TOOLSET)}")
        if isinstance(meta.get(META_TOOLS), dict):
            per_tool = meta[META_TOOLS]
        base = "/tools" if isinstance(data.get("tools"), list) else "/functions"
    for i, item in enumerate(tool_items(data) or []):
        pointer = f"{base}/{i}"
        if not isinstance(item, dict):
            builder.error(f"tool {i} is not an object", pointer)
            continue
        if item.get("type", "function") != "function":
            continue  # a built-in tool (web search, code interpreter, ...): not a function
        function, function_pointer = item, pointer
        if isinstance(item.get("function"), dict):  # the chat-completions shape
            function, function_pointer = item["function"], f"{pointer}/function"
        name = function.get("name")
        extra = per_tool.get(name) if isinstance(name, str) else None
        extra = extra if isinstance(extra, dict) else {}
        outputs_pointer = (
            f"/_meta/{escape_pointer(META_TOOLS)}/{escape_pointer(str(name))}/outputSchema"
        )
        add_signature(builder, name, function_pointer, function.get("description"),
                      function.get("parameters", {"type": "object"}),
                      f"{function_pointer}/parameters", extra.get("outputSchema"),
                      outputs_pointer, extra)


FORMAT = PoolFormat("openai", "OpenAI tool definitions", sniff, read, outputs_are_fields=True,
                    order=200)

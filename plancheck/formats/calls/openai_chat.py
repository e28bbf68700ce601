"""OpenAI chat completions: ``{"id", "type": "function", "function": {"name", "arguments":
"<JSON>"}}`` items of an assistant message's ``tool_calls``, answered by ``{"role": "tool",
"tool_call_id": ID, "content": ...}`` messages."""

from __future__ import annotations

import json
from typing import Any

from plancheck.formats.found import FoundCall, child, is_definition, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    function = item.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or \
            item.get("type", "function") != "function" or is_definition(function):
        return None
    base = child(pointer, "function")
    has_arguments = "arguments" in function
    return FoundCall(pointer, "openai-chat", function["name"], child(base, "name"),
                     function.get("arguments"),
                     child(base, "arguments") if has_arguments else None,
                     call_id=plain_id(item.get("id")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    if item.get("role") != "tool" or "content" not in item:
        return None
    return plain_id(item.get("tool_call_id")), item["content"]


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    call = {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return call if call_id is None else {"id": call_id, **call}


SHAPE = CallShape("openai-chat", read, detected=True, order=100, result=result,
                  markers=('"tool_call_id"',), write=write, trajectories=True,
                  description="OpenAI chat `tool_calls` items, answered by `tool` messages")

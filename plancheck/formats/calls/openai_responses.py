"""OpenAI Responses: ``{"type": "function_call", "call_id", "name", "arguments": "<JSON>"}``
output items, answered by ``{"type": "function_call_output", "call_id", "output"}`` items."""

from __future__ import annotations

import json
from typing import Any

from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if item.get("type") != "function_call" or not isinstance(item.get("name"), str):
        return None
    # Results answer `call_id`; `id` is the item's own id.
    return FoundCall(pointer, "openai-responses", item["name"], child(pointer, "name"),
                     item.get("arguments"),
                     child(pointer, "arguments") if "arguments" in item else None,
                     call_id=plain_id(item.get("call_id")) or plain_id(item.get("id")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    if item.get("type") != "function_call_output" or "output" not in item:
        return None
    return plain_id(item.get("call_id")), item["output"]


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    call = {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}
    return call if call_id is None else {**call, "call_id": call_id}


SHAPE = CallShape("openai-responses", read, detected=True, order=110, result=result,
                  markers=('"function_call_output"',), write=write,
                  description="OpenAI Responses `function_call` items, answered by "
                              "`function_call_output` items")

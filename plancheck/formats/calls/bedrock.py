"""Amazon Bedrock's Converse API: ``{"toolUse": {"toolUseId", "name", "input": {...}}}``
content blocks of an assistant message (``output.message.content``, a request's
``messages[i].content``), answered by ``{"toolResult": {"toolUseId", "content": [{"json":
...} | {"text": ...}], "status"}}`` blocks of a user turn."""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    call = item.get("toolUse")
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    base = child(pointer, "toolUse")
    return FoundCall(pointer, "bedrock", call["name"], child(base, "name"), call.get("input"),
                     child(base, "input") if "input" in call else None,
                     call_id=plain_id(call.get("toolUseId")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    answer = item.get("toolResult")
    if not isinstance(answer, dict):
        return None
    # Each content block holds one value under its kind (`json`, `text`, ...).
    blocks = answer.get("content")
    values = [next(iter(b.values())) for b in blocks if isinstance(b, dict) and len(b) == 1] \
        if isinstance(blocks, list) else []
    return plain_id(answer.get("toolUseId")), values[0] if len(values) == 1 else values


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id or "", "name": name, "input": arguments}}


SHAPE = CallShape("bedrock", read, detected=True, order=150, result=result,
                  markers=('"toolResult"',), write=write,
                  description="Bedrock Converse `toolUse` blocks, answered by `toolResult` "
                              "blocks")

"""Anthropic messages: ``{"type": "tool_use", "id", "name", "input": {...}}`` content blocks,
answered by ``{"type": "tool_result", "tool_use_id", "content"}`` blocks of a user turn."""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if item.get("type") != "tool_use" or not isinstance(item.get("name"), str):
        return None
    return FoundCall(pointer, "anthropic", item["name"], child(pointer, "name"),
                     item.get("input"), child(pointer, "input") if "input" in item else None,
                     call_id=plain_id(item.get("id")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    if item.get("type") != "tool_result":
        return None
    return plain_id(item.get("tool_use_id")), item.get("content")


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id or "", "name": name, "input": arguments}


SHAPE = CallShape("anthropic", read, detected=True, order=120, result=result,
                  markers=('"tool_use_id"',), write=write,
                  description="Anthropic `tool_use` blocks, answered by `tool_result` blocks")

"""Gemini's calls: ``{"functionCall": {"name", "args": {...}}}`` parts of a ``content``
(``candidates[i].content.parts``, a request's ``contents[i].parts``)."""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child

__all__ = ["read_gemini"]


def read_gemini(item: dict[str, Any], pointer: str) -> FoundCall | None:
    call = item.get("functionCall")  # (not `function_call`: OpenAI's legacy chat uses it)
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    base = child(pointer, "functionCall")
    return FoundCall(pointer, "gemini", call["name"], child(base, "name"), call.get("args"),
                     child(base, "args") if "args" in call else None)

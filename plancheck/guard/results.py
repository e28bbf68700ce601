"""What a tool returned, as the JSON value later references and provenance read.

An MCP ``CallToolResult`` (a dict, or the SDK's object) is read for its ``structuredContent``
or else its text content, each text that holds JSON read as JSON; any other value is taken as
it is (a string holding JSON is read as JSON).
"""

from __future__ import annotations

import json
from typing import Any


def result_value(result: Any) -> tuple[Any, bool]:
    """(the value of ``result``, whether the tool reported an error)."""
    dump = getattr(result, "model_dump", None)
    if callable(dump):  # the MCP SDK's CallToolResult (a pydantic model)
        try:
            result = dump(by_alias=True, mode="json", exclude_none=True)
        except (TypeError, ValueError):
            return None, False
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        failed = result.get("isError") is True
        structured = result.get("structuredContent")
        if structured is not None:
            return structured, failed
        texts = [_json_or_text(block.get("text")) for block in result["content"]
                 if isinstance(block, dict) and block.get("type") == "text"]
        return (texts[0] if len(texts) == 1 else texts), failed
    if isinstance(result, (str, bytes)):
        return _json_or_text(result), False
    return result, False


def _json_or_text(text: Any) -> Any:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return text
    if text[:1] in ("{", "[") or text.strip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text
    return text

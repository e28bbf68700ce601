"""Tool results in a transcript, by the call they answer: what the static check records for
provenance, as the guard records each result it is given.

A transcript that includes results pairs each with its call by an id:

==================== ===================================================================
shape                a result is written
==================== ===================================================================
OpenAI chat          ``{"role": "tool", "tool_call_id": ID, "content": ...}`` answering
                     ``{"id": ID, "type": "function", "function": {...}}``
OpenAI Responses     ``{"type": "function_call_output", "call_id": ID, "output": ...}``
                     answering ``{"type": "function_call", "call_id": ID, ...}``
Anthropic            ``{"type": "tool_result", "tool_use_id": ID, "content": ...}`` (in a
                     user message's content) answering ``{"type": "tool_use", "id": ID}``
==================== ===================================================================

The result is taken as written: a string (often a JSON document, read into by
:func:`plancheck.policy.provenance.leaves`), a list of content blocks, or an MCP
``CallToolResult`` (``content`` blocks, ``structuredContent``). Nothing here knows how the calls
themselves were found: a call is named by the JSON pointer of its object, which the frontends
keep in each step's span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Keys that mark a result and the key of the id it answers, by shape (see the table above).
_RESULT_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("tool_call_id", "content", "role"),
    ("tool_use_id", "content", "type"),
    ("call_id", "output", "type"),
)
_MARKERS = ('"tool_call_id"', '"tool_use_id"', '"function_call_output"')
_MAX_DEPTH = 12  # results sit a few containers deep (messages, content blocks)


def may_hold_results(text: str) -> bool:
    """Whether a transcript's text can hold a result at all (a cheap test before parsing)."""
    return any(marker in text for marker in _MARKERS)


def call_results(document: Any, pointers: Sequence[str | None]
                 ) -> tuple[list[str], dict[int, Any]]:
    """For calls at ``pointers`` (JSON pointers into ``document``, one per call, in order): the
    id of each (``""`` when it has none) and the result of each that has one, by position."""
    answers = _results(document)
    ids: list[str] = []
    results: dict[int, Any] = {}
    for position, pointer in enumerate(pointers):
        call = _at(document, pointer) if pointer is not None else None
        ident = _call_id(call)
        ids.append(ident)
        if ident and ident in answers:
            results[position] = answers[ident]
    return ids, results


def _call_id(call: Any) -> str:
    if not isinstance(call, dict):
        return ""
    for key in ("call_id", "id"):  # Responses items have both; results answer call_id
        value = call.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _results(document: Any) -> dict[str, Any]:
    """Every result in ``document`` by the id of the call it answers (the first, if two
    answer one id)."""
    found: dict[str, Any] = {}
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        if depth > _MAX_DEPTH:
            continue
        if isinstance(value, list):
            pending.extend((item, depth + 1) for item in reversed(value))
            continue
        if not isinstance(value, dict):
            continue
        answer = _answer(value)
        if answer is not None:
            found.setdefault(answer[0], answer[1])
            continue
        pending.extend((item, depth + 1) for item in reversed(list(value.values()))
                       if isinstance(item, list | dict))
    return found


def _answer(item: dict[str, Any]) -> tuple[str, Any] | None:
    """(call id, result) when ``item`` is a result in one of the shapes of the table."""
    for id_key, content_key, kind_key in _RESULT_SHAPES:
        ident = item.get(id_key)
        if not isinstance(ident, str) or not ident or content_key not in item:
            continue
        kind = item.get(kind_key)
        if (id_key == "tool_call_id" and kind == "tool") or \
                (id_key == "tool_use_id" and kind == "tool_result") or \
                (id_key == "call_id" and kind == "function_call_output"):
            return ident, item[content_key]
    return None


def _at(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer (None when there is none)."""
    value = document
    if not pointer:
        return value
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value

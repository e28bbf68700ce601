"""Tool results in a transcript, by the call they answer: what the static check records for
provenance, as the guard records each result it is given.

A transcript that includes results pairs each with its call by an id, or, in a format whose
ids are optional (Gemini's: ``CallShape.answer_name``), a result without one with the earliest
unanswered call of the tool it names. Each call shape owns
both (:mod:`plancheck.formats.calls`): the id a call carries (``FoundCall.call_id``) and the
blocks that answer calls (``CallShape.result``), e.g. OpenAI chat's ``{"role": "tool",
"tool_call_id": ID, "content": ...}``, Anthropic's ``tool_result`` blocks, Gemini's
``functionResponse`` parts, Bedrock's ``toolResult`` blocks.

The result is taken as written: a string (often a JSON document, read into by
:func:`plancheck.policy.provenance.leaves`), a list of content blocks, or an MCP
``CallToolResult`` (``content`` blocks, ``structuredContent``). A call is named by the JSON
pointer of its object, which the frontends keep in each step's span.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from plancheck.diagnostics.span import value_at
from plancheck.formats.shapes import pairs_by_name, read_answer, read_call, result_markers

_MAX_DEPTH = 12  # results sit a few containers deep (messages, content blocks)


def may_hold_results(text: str) -> bool:
    """Whether a transcript's text can hold a result at all (a cheap test before parsing)."""
    return any(marker in text for marker in result_markers())


def call_results(document: Any, pointers: Sequence[str | None]
                 ) -> tuple[list[str], dict[int, Any]]:
    """For calls at ``pointers`` (JSON pointers into ``document``, one per call, in order): the
    id of each (``""`` when it has none) and the result of each that has one, by position."""
    answers, by_name = _results(document)
    ids: list[str] = []
    results: dict[int, Any] = {}
    for position, pointer in enumerate(pointers):
        call = read_call(value_at(document, pointer)) if pointer is not None else None
        ident = call.call_id or "" if call is not None else ""
        ids.append(ident)
        if ident and ident in answers:
            results[position] = answers[ident]
        elif not ident and call is not None and by_name.get(call.name) and \
                pairs_by_name(call.shape):
            results[position] = by_name[call.name].popleft()
    return ids, results


def _results(document: Any) -> tuple[dict[str, Any], dict[str, deque[Any]]]:
    """Every result in ``document`` by the id of the call it answers (the first, if two
    answer one id), and those without an id that pair by tool, by tool in document order."""
    found: dict[str, Any] = {}
    by_name: dict[str, deque[Any]] = {}
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
        answer = read_answer(value)
        if answer is not None:
            if answer[0]:
                found.setdefault(answer[0], answer[2])
            elif answer[1] is not None:
                by_name.setdefault(answer[1], deque()).append(answer[2])
            continue
        pending.extend((item, depth + 1) for item in reversed(list(value.values()))
                       if isinstance(item, list | dict))
    return found, by_name

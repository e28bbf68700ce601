"""A repaired plan written back in the shape its calls were read in: what ``plancheck fix``
prints for a document of tool calls (an OpenAI assistant message gets OpenAI calls back, not
DisasterBench steps).

The repair works on the plan's steps (the H.3 schema: ``agent``, ``inputs``, ...). When every
step of the checked plan was read from a call of the document (its span's JSON pointer names
an object some call shape reads), and the repair kept the number of steps, each repaired step
goes back into its call: the tool's name where the call keeps it, the arguments where it keeps
them (as JSON text where they were JSON text), the rest of the document as it was. A repair
that dropped or added steps gives the calls alone, each written by the first call's shape
(:attr:`plancheck.formats.shape.CallShape.write`), ids kept by position.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from plancheck.diagnostics.span import pointer_tokens, value_at
from plancheck.formats.found import FoundCall
from plancheck.formats.shapes import call_shapes, read_call
from plancheck.ir.nodes import Plan

__all__ = ["write_back"]


def write_back(document: Any, plan: Plan, repaired: list[dict[str, Any]], *,
               file: str | None = None) -> Any | None:
    """``repaired`` written in the shape of the calls ``plan`` was read from in ``document``
    (None: the JSON document in ``file``), or None when the plan was not read from calls
    (then the steps are the output)."""
    if document is None and file is not None and file != "-":
        from plancheck.fileio import read_text_limited

        try:
            document = json.loads(read_text_limited(file, "utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            return None  # a completion's text, say: the steps are the output
    calls = _calls_of(document, plan)
    if calls is None:
        return None
    if len(calls) != len(repaired):
        shape = call_shapes()[calls[0].shape]
        if shape.write is None:
            return None
        return [shape.write(str(step.get("agent", "")), step.get("inputs", {}),
                            calls[i].call_id if i < len(calls) else None)
                for i, step in enumerate(repaired)]
    written = copy.deepcopy(document)
    for call, step in zip(calls, repaired, strict=True):
        if call.name_pointer is not None and isinstance(step.get("agent"), str):
            written = _set(written, call.name_pointer, step["agent"])
        if call.arguments_pointer is not None and "inputs" in step:
            inputs = step["inputs"]
            if isinstance(call.arguments, str):  # written as JSON text (OpenAI)
                inputs = json.dumps(inputs, ensure_ascii=False)
            written = _set(written, call.arguments_pointer, inputs)
    return written


def _calls_of(document: Any, plan: Plan) -> list[FoundCall] | None:
    if not plan.steps or not isinstance(document, (dict, list)):
        return None
    calls = []
    for step in plan.steps:
        pointer = step.span.pointer
        call = read_call(value_at(document, pointer), pointer) if pointer is not None else None
        if call is None:
            return None
        calls.append(call)
    return calls


def _set(document: Any, pointer: str, value: Any) -> Any:
    """``document`` with the member at ``pointer`` (which exists) replaced by ``value``."""
    tokens = pointer_tokens(pointer)
    if not tokens:
        return value
    parent = document
    for token in tokens[:-1]:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    last = tokens[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    else:
        parent[last] = value
    return document

"""One reading of what a guard is given: the calls in it, each with its tool, arguments and id.

Any call shape plancheck reads (the registry :data:`plancheck.formats.shapes.CALL_SHAPES`:
OpenAI chat ``tool_calls`` items, Responses ``function_call`` items, Anthropic ``tool_use``
blocks, Gemini ``functionCall`` parts, JSON-RPC ``tools/call`` requests, ``{name,
arguments}`` and its aliases), one assistant message or a list of the parallel calls of one
turn, as a Python value or as JSON text: the same walk as every other entry point.
"""

from __future__ import annotations

import json
from typing import Any

from plancheck.compiler.repeated_keys import arguments_noting_repeats
from plancheck.formats.calls.generic import SHAPE as _GENERIC
from plancheck.formats.calls.generic import is_plain_call
from plancheck.formats.found import plain_id as _plain_id
from plancheck.formats.shapes import find_calls, read_call

# Arguments or a call larger than this (as JSON text) are refused unread.
MAX_TEXT = 1_000_000


class ProposedCall:
    """A call as written: ``tool`` and ``arguments`` unchecked (the guard checks them). Plain,
    not a record: one is made per call (compiled, a C struct); nothing compares them."""

    __slots__ = ("arguments", "call_id", "conflict", "has_arguments", "shape", "tool")

    def __init__(self, tool: Any, arguments: Any, call_id: str | None, shape: str,
                 has_arguments: bool = True, conflict: tuple[str, str] | None = None) -> None:
        self.tool = tool
        self.arguments = arguments
        self.call_id = call_id
        self.shape = shape
        self.has_arguments = has_arguments
        self.conflict = conflict  # another reading of the object (FoundCall.conflict)


def read_calls(value: Any) -> list[ProposedCall] | str:
    """The calls in ``value``, in order, or why none can be read."""
    if isinstance(value, (str, bytes)):
        if len(value) > MAX_TEXT:
            return f"the call is {len(value):,} characters long, more than {MAX_TEXT:,}"
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:
            return f"the call is not valid JSON ({_reason(error)})"
    if is_plain_call(value):  # (at a fraction of the cost of asking every shape)
        return [ProposedCall(value["name"], value["arguments"], _plain_id(value.get("id")),
                             _GENERIC.name)]
    try:
        # One call object is read as find_calls reads it at the top, without the walk.
        one = read_call(value) if type(value) is dict else None
        found = [one] if one is not None else find_calls(value)
    except RecursionError:
        return "the call is nested too deeply to read"
    calls = [ProposedCall(c.name, c.arguments, c.call_id, c.shape,
                          c.arguments_pointer is not None, c.conflict) for c in found]
    if not calls:
        return ("no tool call found: expected an object with a tool name and its arguments "
                "(`{\"name\": ..., \"arguments\": {...}}`, an OpenAI tool call, an Anthropic "
                "`tool_use` block or a JSON-RPC `tools/call` request)")
    return calls


def decode_arguments(arguments: Any) -> tuple[Any, str | None, list[str]]:
    """The arguments as a JSON value (decoding JSON text), or why they cannot be read; and the
    keys an object of that text repeats (a reader that keeps the first value runs another
    call than the one read here, which keeps the last)."""
    if arguments is None:
        return {}, None, []
    if isinstance(arguments, (str, bytes)):
        if len(arguments) > MAX_TEXT:
            return None, (f"the arguments are {len(arguments):,} characters long, more than "
                          f"{MAX_TEXT:,}"), []
        if not str(arguments).strip():
            return arguments, None, []  # no JSON object (check says PC108 too)
        try:
            value, repeated = arguments_noting_repeats(arguments)
        except (ValueError, RecursionError) as error:
            return None, f"the arguments are not valid JSON ({_reason(error)})", []
        return value, None, repeated
    return arguments, None, []


def _reason(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at character {error.pos}"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return str(error)

"""The call shapes: where each way of writing a tool call keeps its name and its arguments.

One registry, :data:`CALL_SHAPES`, in the order they are tried. Each shape is a reader from
one JSON object (and its JSON pointer) to a :class:`FoundCall` or ``None``; ``detected``
says whether it is tried on any input, ``answers`` whether only inside BFCL's ``ground_truth``
(or when forced). ``--call-format``'s choices are the registry's names
(:data:`plancheck.compiler.call_formats.CALL_FORMATS`). :func:`find_calls` walks the
containers (:data:`plancheck.formats.records.CALL_CONTAINER_KEYS`) and asks the shapes;
:func:`read_call` reads one object. Adding a shape: one reader here, one registry line, one
test case (``docs/adding-a-call-shape.md``).

Built on :mod:`plancheck.records`, not dataclasses: ``--call-format`` parsing imports this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from plancheck.diagnostics.limits import MAX_STEPS
from plancheck.formats.found import FoundCall, child
from plancheck.formats.gemini import read_gemini
from plancheck.formats.jsonrpc import read_jsonrpc
from plancheck.formats.records import (
    CALL_ARGUMENT_KEYS,
    CALL_CONTAINER_KEYS,
    CALL_NAME_KEYS,
    PLAN_WRAPPER_KEYS,
)
from plancheck.ir.schema import FIELD_ALIASES, PLAN_STEP_KEYS, STEP_FIELDS
from plancheck.records import FrozenRecord, replace

__all__ = ["CALL_SHAPES", "WHOLE_OUTPUT", "CallShape", "FoundCall", "find_calls",
           "is_definition", "positional_key", "read_call"]

# The output key of "the whole output" of a call, and of its i-th positional output.
WHOLE_OUTPUT: Final = ""


def positional_key(index: int) -> str:
    return f"#{index}"


def is_definition(item: dict[str, Any]) -> bool:
    """A tool definition (its parameters are a schema), not a call: the one test of it."""
    for key in ("parameters", "inputSchema", "input_schema"):
        schema = item.get(key)
        if isinstance(schema, dict) and (schema.get("type") in ("object", "dict")
                                         or isinstance(schema.get("properties"), dict)):
            return True
    return False


# Members that make an object a DisasterBench plan step rather than a call.
_PLAN_FIELDS = frozenset({*STEP_FIELDS, *FIELD_ALIASES, *PLAN_WRAPPER_KEYS})


def _openai_chat(item: dict[str, Any], pointer: str) -> FoundCall | None:
    function = item.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or \
            item.get("type", "function") != "function" or is_definition(function):
        return None
    base = child(pointer, "function")
    has_arguments = "arguments" in function
    return FoundCall(pointer, "openai-chat", function["name"], child(base, "name"),
                     function.get("arguments"),
                     child(base, "arguments") if has_arguments else None)


def _openai_responses(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if item.get("type") != "function_call" or not isinstance(item.get("name"), str):
        return None
    return FoundCall(pointer, "openai-responses", item["name"], child(pointer, "name"),
                     item.get("arguments"),
                     child(pointer, "arguments") if "arguments" in item else None)


def _anthropic(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if item.get("type") != "tool_use" or not isinstance(item.get("name"), str):
        return None
    return FoundCall(pointer, "anthropic", item["name"], child(pointer, "name"),
                     item.get("input"), child(pointer, "input") if "input" in item else None)


def _generic(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if not PLAN_STEP_KEYS.isdisjoint(item) or is_definition(item):
        return None
    name_key = next((k for k in CALL_NAME_KEYS if isinstance(item.get(k), str)), None) or next(
        (k for k in CALL_NAME_KEYS if k in item and not isinstance(item[k], (dict, list))),
        None)
    arguments_key = next((k for k in CALL_ARGUMENT_KEYS if k in item), None)
    if name_key is None or arguments_key is None:
        return None
    labels: list[tuple[str, str]] = []
    responses = item.get("responses")
    if isinstance(responses, list):  # Seal-Tools: the i-th label is the i-th output
        labels.extend((r, positional_key(i)) for i, r in enumerate(responses)
                      if isinstance(r, str))
    label = item.get("label")
    if isinstance(label, str) and label:
        labels.append((label if label.startswith("$") else "$" + label, WHOLE_OUTPUT))
    return FoundCall(pointer, "generic", item[name_key], child(pointer, name_key),
                     item[arguments_key], child(pointer, arguments_key), tuple(labels))


def _name_keyed(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if len(item) != 1:
        return None
    ((name, arguments),) = item.items()
    if not isinstance(arguments, dict) or name in CALL_CONTAINER_KEYS or name in _PLAN_FIELDS:
        return None
    return FoundCall(pointer, "name-keyed", name, None, arguments, child(pointer, name))


def _bfcl_answer(item: dict[str, Any], pointer: str) -> FoundCall | None:
    found = _name_keyed(item, pointer)
    if found is None or not all(isinstance(v, list) for v in found.arguments.values()):
        return None
    return replace(found, shape="bfcl-answer")


class CallShape(FrozenRecord):
    """A registered call shape: its name, its reader, and where it is tried."""

    __slots__ = ("answers", "detected", "name", "read")
    _fields = ("name", "read", "detected", "answers")

    def __init__(self, name: str, read: Callable[[dict[str, Any], str], FoundCall | None],
                 detected: bool, answers: bool = False) -> None:
        self.name = name
        self.read = read
        self.detected = detected
        self.answers = answers


# The registry, in the order shapes are tried (answer shapes first inside `ground_truth`).
CALL_SHAPES: Final = {shape.name: shape for shape in (
    CallShape("openai-chat", _openai_chat, detected=True),
    CallShape("openai-responses", _openai_responses, detected=True),
    CallShape("anthropic", _anthropic, detected=True),
    CallShape("gemini", read_gemini, detected=True),
    CallShape("mcp-jsonrpc", read_jsonrpc, detected=True),
    CallShape("generic", _generic, detected=True),
    CallShape("name-keyed", _name_keyed, detected=False, answers=True),
    CallShape("bfcl-answer", _bfcl_answer, detected=False, answers=True),
)}
_DETECTED: Final = tuple(s.name for s in CALL_SHAPES.values() if s.detected)
_IN_ANSWERS: Final = ("bfcl-answer", "name-keyed", *_DETECTED)


def read_call(value: Any, pointer: str = "", shape: str | None = None) -> FoundCall | None:
    """``value`` read as one call (of ``shape``, else of the first detected shape that reads
    it), or ``None``."""
    if not isinstance(value, dict):
        return None
    for name in (shape,) if shape is not None else _DETECTED:
        call = CALL_SHAPES[name].read(value, pointer)
        if call is not None:
            return call
    return None


def find_calls(value: Any, call_format: str | None = None) -> list[FoundCall]:
    """Every call in ``value``, in document order (see the module docstring)."""
    found: list[FoundCall] = []
    _walk(value, "", found, call_format, in_answers=False, depth=0)
    return found


def _bfcl_output(value: list[Any]) -> bool:
    """``[{"tool": {arguments}}, ...]``: the way BFCL decodes model output, and not a list some
    detected shape reads (Gemini's ``parts`` are one-key objects too)."""
    return bool(value) and all(
        isinstance(i, dict) and _name_keyed(i, "") is not None
        and not PLAN_STEP_KEYS.intersection(i) and read_call(i) is None for i in value)


def _walk(value: Any, pointer: str, found: list[FoundCall], forced_shape: str | None, *,
          in_answers: bool, depth: int) -> None:
    if depth > 8:  # calls sit a few containers deep; deeper is data, not a transcript
        return
    if isinstance(value, list):
        if forced_shape is None and not in_answers and _bfcl_output(value):
            forced_shape = "name-keyed"
        for i, item in enumerate(value):
            if len(found) > MAX_STEPS:  # enough to refuse the input (PC006); stop reading it
                return
            _walk(item, child(pointer, i), found, forced_shape, in_answers=in_answers,
                  depth=depth + 1)
        return
    if not isinstance(value, dict):
        return
    if forced_shape is not None:
        shapes: tuple[str, ...] = (forced_shape,)
    elif in_answers:
        shapes = _IN_ANSWERS
    else:
        shapes = _DETECTED
    for shape in shapes:
        call = CALL_SHAPES[shape].read(value, pointer)
        if call is not None:
            found.append(call)
            return
    for key in CALL_CONTAINER_KEYS:
        if key in value and isinstance(value[key], (list, dict)):
            _walk(value[key], child(pointer, key), found, forced_shape,
                  in_answers=in_answers or key == "ground_truth", depth=depth + 1)

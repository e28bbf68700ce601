"""The call shapes: where each way of writing a tool call keeps its name, its arguments, its id
and its results.

One registry, :data:`CALL_SHAPES`, in the order they are tried: the built-in shapes, one module
each in :mod:`plancheck.formats.calls` (found there, ordered by their ``order``), then on
demand the plugins' (:func:`call_shapes`, entry-point group ``plancheck.call_shapes``). Each
shape is a :class:`~plancheck.formats.shape.CallShape`: a reader from one JSON object (and its
JSON pointer) to a :class:`FoundCall` or ``None``, and what else it owns (its results, how a
call is written). ``--call-format``'s choices are the registry's names
(:data:`plancheck.compiler.call_formats.CALL_FORMATS`). :func:`find_calls` walks the
containers (:data:`plancheck.formats.records.CALL_CONTAINER_KEYS`) and asks the shapes;
:func:`read_call` reads one object; :func:`read_result` reads a block answering a call.
Adding a shape: one module in ``plancheck/formats/calls/`` and one test file
(``docs/adding-a-call-shape.md``).

Built on :mod:`plancheck.records`, not dataclasses: ``--call-format`` parsing imports this.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from plancheck.diagnostics.limits import MAX_STEPS
from plancheck.formats.ambiguity import with_other_reading
from plancheck.formats.found import (
    WHOLE_OUTPUT,
    FoundCall,
    child,
    is_definition,
    positional_key,
)
from plancheck.formats.plugins import builtin, load
from plancheck.formats.records import CALL_CONTAINER_KEYS, CHAT_CONTAINER_KEYS
from plancheck.formats.shape import CallShape
from plancheck.ir.schema import PLAN_STEP_KEYS

__all__ = ["CALL_SHAPES", "WHOLE_OUTPUT", "CallShape", "FoundCall", "call_shapes", "find_calls",
           "is_definition", "pairs_by_name", "positional_key", "read_answer", "read_call",
           "read_result"]


def _ordered(shapes: list[CallShape]) -> dict[str, CallShape]:
    return {shape.name: shape for shape in sorted(shapes, key=lambda s: (s.order, s.name))}


# The built-in shapes, in the order they are tried (answer shapes first inside
# `ground_truth`).
CALL_SHAPES: Final = _ordered(builtin("plancheck.formats.calls.*", "SHAPE"))


@cache
def call_shapes() -> dict[str, CallShape]:
    """Every shape, the plugins' with the built-ins, in the order they are tried."""
    plugins = [shape for _, shape in load("plancheck.call_shapes", CallShape)]
    return _ordered([*CALL_SHAPES.values(), *plugins]) if plugins else CALL_SHAPES


@cache
def _tried() -> tuple[tuple[CallShape, ...], tuple[CallShape, ...], tuple[CallShape, ...]]:
    """The shapes tried on any input, those tried inside BFCL's answers, and those whose
    results a transcript may hold."""
    shapes = call_shapes()
    detected = tuple(s for s in shapes.values() if s.detected)
    answers = tuple(s for s in shapes.values() if s.answers and not s.detected)
    return (detected, (*sorted(answers, key=lambda s: -s.order), *detected),
            tuple(s for s in shapes.values() if s.result is not None))


def read_call(value: Any, pointer: str = "", shape: str | None = None) -> FoundCall | None:
    """``value`` read as one call (of ``shape``, else of the first detected shape that reads
    it), or ``None``."""
    if not isinstance(value, dict):
        return None
    for each in (call_shapes()[shape],) if shape is not None else _tried()[0]:
        call = each.read(value, pointer)
        if call is not None:
            return with_other_reading(value, call)
    return None


def read_result(value: Any) -> tuple[str | None, Any] | None:
    """``value`` read as a block answering a call (the id of the call it answers, or None when
    it names none; its result), or ``None``: a block that is no call."""
    answer = read_answer(value)
    return None if answer is None else (answer[0], answer[2])


def read_answer(value: Any) -> tuple[str | None, str | None, Any] | None:
    """``value`` read as a block answering a call: the id of the call it answers (or None),
    the tool it names when it has no id and its shape pairs results by tool and order (else
    None), and its result; ``None`` for a block that is no result."""
    if not isinstance(value, dict):
        return None
    for shape in _tried()[2]:
        assert shape.result is not None
        answer = shape.result(value)
        if answer is not None:
            name = shape.answer_name(value) if answer[0] is None and \
                shape.answer_name is not None else None
            return answer[0], name, answer[1]
    return None


def pairs_by_name(shape: str) -> bool:
    """Whether the calls of ``shape`` without an id are answered by tool and order."""
    found = call_shapes().get(shape)
    return found is not None and found.answer_name is not None


def result_markers() -> tuple[str, ...]:
    """Text that any transcript holding a result contains (a cheap test before parsing)."""
    return tuple(m for shape in _tried()[2] for m in shape.markers)


def find_calls(value: Any, call_format: str | None = None) -> list[FoundCall]:
    """Every call in ``value``, in document order (see the module docstring)."""
    found: list[FoundCall] = []
    forced = None if call_format is None else (call_shapes()[call_format],)
    _walk(value, "", found, forced, in_answers=False, in_chat=False, depth=0)
    return found


def _bfcl_output(value: list[Any]) -> bool:
    """``[{"tool": {arguments}}, ...]``: the way BFCL decodes model output, and not a list some
    detected shape reads (Gemini's ``parts`` are one-key objects too) nor results."""
    name_keyed = CALL_SHAPES["name-keyed"]
    return bool(value) and all(
        isinstance(i, dict) and name_keyed.read(i, "") is not None
        and not PLAN_STEP_KEYS.intersection(i) and read_call(i) is None
        and read_result(i) is None for i in value)


def _walk(value: Any, pointer: str, found: list[FoundCall],
          forced: tuple[CallShape, ...] | None, *, in_answers: bool, in_chat: bool,
          depth: int) -> None:
    if depth > 8:  # calls sit a few containers deep; deeper is data, not a transcript
        return
    if isinstance(value, list):
        # A chat container's one-key objects are its format's blocks, not BFCL's output.
        if forced is None and not in_answers and not in_chat and _bfcl_output(value):
            forced = (CALL_SHAPES["name-keyed"],)
        for i, item in enumerate(value):
            if len(found) > MAX_STEPS:  # enough to refuse the input (PC006); stop reading it
                return
            _walk(item, child(pointer, i), found, forced, in_answers=in_answers,
                  in_chat=in_chat, depth=depth + 1)
        return
    if not isinstance(value, dict):
        return
    detected, answers, _ = _tried()
    for shape in forced if forced is not None else answers if in_answers else detected:
        call = shape.read(value, pointer)
        if call is not None:
            found.append(with_other_reading(value, call))
            return
    if read_result(value) is not None:
        return  # a result: no call, nor calls inside it
    for key in CALL_CONTAINER_KEYS:
        if key in value and isinstance(value[key], (list, dict)):
            _walk(value[key], child(pointer, key), found, forced,
                  in_answers=in_answers or key == "ground_truth",
                  in_chat=in_chat or key in CHAT_CONTAINER_KEYS, depth=depth + 1)

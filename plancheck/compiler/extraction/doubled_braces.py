"""json-repair 0.64.6 on a plan written with doubled braces (``[{{"agent": ...}}]``, a
prompt template's escaped braces copied into the answer), computed structurally."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from plancheck.compiler.extraction.brackets import brackets_balanced, collapse_doubled_braces
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.fast_json import loads_or_invalid

# Texts like ``[{{"agent": "X", "inputs": {{"a": "b"}}, ...}}]`` (a prompt template's escaped
# braces copied into the answer) are common, and json-repair takes ~0.2 ms on each. For the
# shape below, its result follows from reading json-repair 0.64.6's parser
# (parse_array / parse_object / _complete_object_parse / _parse_top_level):
#
# * Inside the top-level array, a step's ``{{`` opens one object (the second brace is skipped
#   as junk before the first key). A member whose value is an object ends that object: the
#   first ``}`` of the value's ``}}`` closes the value, the second the step. Later members
#   become a new object, parsed from their key ("missing opening brace"). The step's own
#   closing ``}}`` closes the current object and is skipped as an extra brace.
# * If a step's last member is an object, the extra brace ends the whole array. The remaining
#   steps are then parsed as further top-level values: each is read whole (top-level objects
#   merge continuation members back in), the result becomes ``[array, step, step, ...]``, and
#   from the second such step on a step replaces its predecessor when both have the same
#   shape (json-repair's "repeated objects are updates" rule, ObjectComparer.is_same_object).
#
# * An *empty* object member is different: ``{{}}`` holds no key, so json-repair skips its
#   braces as junk in front of the next key, and that empty object swallows the members that
#   follow, up to and including the next object member (whose ``}}`` then closes it), or up
#   to the end of the step (whose ``}}`` closes it and the current object).
#
# The shape: an ASCII JSON text without backslashes, with every brace doubled, starting
# ``[{{``; undoubled, it parses to a non-empty array of non-empty objects with non-empty keys,
# whose members are scalars, arrays of scalars, or objects of such members; no string holds
# a brace and no float is NaN or infinite. So every string is opaque to json-repair (each
# takes its "simple quoted string" fast path). Not emulated, and left to json-repair: an
# empty object as a step's last member or inside a swallowed run, and an empty object after
# the array closed early.
# tests/scoring/test_parity.py checks this emulation against json-repair on many random inputs.

# Floats parsed from text without NaN/Infinity are finite or overflowed numbers (1e999),
# which json-repair turns into the same float.
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True, slots=True)
class _DoubledPlan:
    """A candidate of the doubled-brace shape, undoubled and parsed."""

    steps: list[dict[str, Any]]
    flat_steps: list[bool]  # per step: no member is an object
    arrays: int  # how many arrays the value holds, itself included


def undouble(candidate: str) -> _DoubledPlan | None:
    """Parse ``candidate`` if it has the doubled-brace shape described above, else None."""
    if not candidate.startswith("[{{") or "\\" in candidate or not candidate.isascii():
        return None
    collapsed = collapse_doubled_braces(candidate)
    # Every brace was doubled: each replacement shortens the text by one, so a single brace
    # that survived would leave the text longer than that.
    opening = collapsed.count("{")
    closing = collapsed.count("}")
    if len(candidate) - len(collapsed) != opening + closing:
        return None
    if "NaN" in collapsed or "Infinity" in collapsed:
        return None  # json.loads reads these constants, json-repair does not (maybe in strings)
    steps = loads_or_invalid(collapsed)
    if type(steps) is not list or not steps:
        return None
    objects = 0
    arrays = 1
    flat_steps = []
    scalars = _SCALAR_TYPES
    for step in steps:
        if type(step) is not dict or not step or "" in step:
            return None
        objects += 1
        flat = True
        for value in step.values():
            kind = type(value)
            if kind is list:
                arrays += 1
                if not scalars.issuperset(map(type, value)):
                    return None
            elif kind is dict:
                if "" in value:
                    return None
                objects += 1
                flat = False
                for inner in value.values():
                    inner_kind = type(inner)
                    if inner_kind is list:
                        arrays += 1
                        if not scalars.issuperset(map(type, inner)):
                            return None
                    elif inner_kind not in scalars:
                        return None
            elif kind not in scalars:
                return None
        flat_steps.append(flat)
    if opening != objects or closing != objects:  # a brace inside some string
        return None
    return _DoubledPlan(steps, flat_steps, arrays)


def mend_doubled_braces(candidate: str) -> Any:
    """``json.loads(repair_json(candidate))`` for the doubled-brace shape described above, or
    ``NO_ANSWER`` when ``candidate`` does not have that shape."""
    plan = undouble(candidate)
    return NO_ANSWER if plan is None else split_doubled_steps(plan.steps)


def split_doubled_steps(steps: list[dict[str, Any]]) -> Any:
    """json-repair's reading of the doubled-brace array, or ``NO_ANSWER`` for the corners we
    do not emulate (an empty object as a step's last member, nested empty objects, or an
    empty object after the array closed early)."""
    pieces: list[Any] = []
    for index, step in enumerate(steps):
        closed_early = split_doubled_step(list(step.items()), pieces)
        if closed_early is None:
            return NO_ANSWER
        if closed_early and index + 1 < len(steps):
            rest = steps[index + 1 :]
            if any(type(v) is dict and not v for step in rest for v in step.values()):
                return NO_ANSWER
            return _doubled_top_level_tail(pieces, rest)
    return pieces


def split_doubled_step(members: list[tuple[str, Any]], pieces: list[Any]) -> bool | None:
    """Append the objects json-repair makes of one doubled-brace step inside the top-level
    array (see the notes above); True when the step's last ``}}`` leaves a stray brace that
    closes the array, None for a corner that is not emulated."""
    current: dict[str, Any] = {}
    position = 0
    while position < len(members):
        key, value = members[position]
        position += 1
        if type(value) is not dict:
            current[key] = value
            continue
        if value:
            current[key] = value
            pieces.append(current)
            current = {}
            if position == len(members):
                return True
            continue
        if position == len(members):
            return None  # swallows the next step (or trails off the end): not emulated
        swallowed: dict[str, Any] = {}
        while position < len(members):
            inner_key, inner_value = members[position]
            position += 1
            swallowed[inner_key] = inner_value
            if type(inner_value) is dict:
                if not inner_value:
                    return None
                break
        current[key] = swallowed
    if current:
        pieces.append(current)
    return False


def _doubled_top_level_tail(pieces: list[Any], rest: list[dict[str, Any]]) -> list[Any]:
    values: list[Any] = [pieces]
    for position, step in enumerate(rest):
        if position > 0 and _same_shape(values[-1], step):
            values.pop()
        values.append(step)
    return values


def _same_shape(left: Any, right: Any) -> bool:
    """json-repair's ObjectComparer.is_same_object: same types, keys and lengths throughout."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return len(left) == len(right) and all(
            key in right and _same_shape(value, right[key]) for key, value in left.items()
        )
    if type(left) is list:
        return len(left) == len(right) and all(
            _same_shape(a, b) for a, b in zip(left, right, strict=True)
        )
    return True


def extract_doubled(completion: str, notes: list[str]) -> Any:
    """The whole extraction (quirks 2-7) for a completion that is nothing but a doubled-brace
    plan of the shape above (no newline, so the flattened text is the completion itself);
    ``NO_ANSWER`` when it does not apply.

    In such a text the isolation regexes can only see these objects: a step without object
    members (``{{...}}`` is a brace pair around a brace pair), an inner object, and single-brace
    views of either that are always followed by a ``}``. Hence: stage (a) matches the whole
    text exactly when no step has an object member; stage (b) matches the first run of two or
    more consecutive such steps; stage (c) takes step 1 if it has no object member, else its
    first inner object, and keeps it if a string in it is exactly "agent" and one is exactly
    "step" (the only way the quoted words can occur in backslash-free JSON). Whatever is
    isolated fails ``json.loads`` (doubled braces) and goes to json-repair, emulated above.
    """
    if not completion.endswith("}}]") or "\n" in completion:
        return NO_ANSWER
    plan = undouble(completion)
    if plan is None:
        return NO_ANSWER
    how, value = doubled_isolation(completion, plan)
    if value is SPLIT:
        value = split_doubled_steps(plan.steps)
    if value is NO_ANSWER:
        return NO_ANSWER
    if how:
        notes.append(how)
    notes.append("json-repair mended the JSON")
    return value


class _Split:
    """Marker: json-repair reads the whole doubled-brace text (:func:`split_doubled_steps`)."""


SPLIT: Final = _Split()


def doubled_isolation(completion: str, plan: _DoubledPlan) -> tuple[str, Any]:
    """How the reference isolates a doubled-brace text ("" when it keeps all of it), and
    json-repair's reading of what it isolated (``SPLIT`` for the whole text)."""
    steps, flat = plan.steps, plan.flat_steps
    if _doubled_text_balanced(completion, plan):
        if all(flat):
            return "", list(steps)
        for first in range(len(steps) - 1):
            if flat[first] and flat[first + 1]:
                last = first + 1
                while last + 1 < len(steps) and flat[last + 1]:
                    last += 1
                return "comma-separated step objects wrapped into an array", steps[first : last + 1]
        head = steps[0] if flat[0] else next(v for v in steps[0].values() if type(v) is dict)
        if _holds_string(head, "agent") and _holds_string(head, "step"):
            return "single step object wrapped into an array", [head]
    return "read the raw text between the first `[` and the last `]`", SPLIT


def _doubled_text_balanced(text: str, plan: _DoubledPlan) -> bool:
    """Quirk 3 for a doubled-brace text: its braces are all structural, so it balances when no
    string holds a bracket or parenthesis; otherwise count properly."""
    if (
        text.count("[") == plan.arrays
        and text.count("]") == plan.arrays
        and "(" not in text
        and ")" not in text
    ):
        return True
    return brackets_balanced(text)


def _holds_string(item: dict[str, Any], word: str) -> bool:
    """Whether a key or string value (or array member) of ``item`` is exactly ``word``."""
    return word in item or any(
        value == word or (type(value) is list and word in value) for value in item.values()
    )

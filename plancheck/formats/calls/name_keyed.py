"""``{"tool_name": {arguments}}``: BFCL's decoded model output, read inside ``ground_truth``,
in a bare list of such objects, or when forced."""

from __future__ import annotations

from typing import Any

from plancheck.formats.found import FoundCall, child
from plancheck.formats.records import CALL_CONTAINER_KEYS, PLAN_WRAPPER_KEYS
from plancheck.formats.shape import CallShape
from plancheck.ir.schema import FIELD_ALIASES, STEP_FIELDS

# Members that make an object a DisasterBench plan step rather than a call.
_PLAN_FIELDS = frozenset({*STEP_FIELDS, *FIELD_ALIASES, *PLAN_WRAPPER_KEYS})


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    if len(item) != 1:
        return None
    ((name, arguments),) = item.items()
    if not isinstance(arguments, dict) or name in CALL_CONTAINER_KEYS or name in _PLAN_FIELDS:
        return None
    return FoundCall(pointer, "name-keyed", name, None, arguments, child(pointer, name))


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    return {name: arguments}


SHAPE = CallShape("name-keyed", read, detected=False, answers=True, order=950, write=write,
                  description="`{tool_name: {arguments}}` (BFCL's decoded output)")

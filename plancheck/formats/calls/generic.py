"""The generic shape: the name under ``name``/``tool``/``tool_name``/``api``/``task``/
``function``/``action``, the arguments under ``arguments``/``args``/``parameters``/``params``/
``param``/``input``/``inputs``/``action_input`` (:data:`plancheck.formats.records.
CALL_NAME_KEYS`, :data:`~plancheck.formats.records.CALL_ARGUMENT_KEYS`), what agent loops
build and most tool-use corpora write. It guesses from key names, so it comes after every
shape with a mark of its own."""

from __future__ import annotations

from typing import Any, Final

from plancheck.formats.found import (
    WHOLE_OUTPUT,
    FoundCall,
    child,
    is_definition,
    plain_id,
    positional_key,
)
from plancheck.formats.records import CALL_ARGUMENT_KEYS, CALL_NAME_KEYS
from plancheck.formats.shape import CallShape
from plancheck.ir.schema import PLAN_STEP_KEYS

_ID_KEYS = ("call_id", "id", "tool_call_id", "tool_use_id")


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
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
    call_id = next((found for found in map(plain_id, map(item.get, _ID_KEYS))
                    if found is not None), None)
    return FoundCall(pointer, "generic", item[name_key], child(pointer, name_key),
                     item[arguments_key], child(pointer, arguments_key), tuple(labels), call_id)


def write(name: str, arguments: Any, call_id: str | None) -> dict[str, Any]:
    call = {"name": name, "arguments": arguments}
    return call if call_id is None else {"id": call_id, **call}


# Every syntax the corpora written this way use: DisasterBench's and DORA's references,
# TaskBench's `<node-k>`, templates, Seal-Tools' labels and `API_call_k`.
SHAPE = CallShape("generic", read, detected=True, order=900, write=write,
                  references=("generated", "dora", "taskbench", "template", "label",
                              "api-call"), trajectories=True,
                  description="`{name, arguments}` and the aliases of its keys")


# The call object agent loops build: no shape but this one reads an object holding only these
# members, so a reader on a hot path (the guard's) may take it as this shape's without asking
# the others.
PLAIN_CALL_MEMBERS: Final = frozenset({"name", "arguments", "id"})


def is_plain_call(value: Any) -> bool:
    """``{"name": str, "arguments": ..., "id"?: ...}`` and nothing else."""
    if type(value) is not dict or type(value.get("name")) is not str or "arguments" not in value:
        return False
    # (compiled, all() over a generator is a loop of lookups: no set is built from the keys)
    return all(key in PLAIN_CALL_MEMBERS for key in value)

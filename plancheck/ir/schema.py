"""The plan step schema (the paper's Appendix H.3): its fields, the aliases the reference
evaluator accepts for them, and the wrapper objects a plan may arrive in.

Every frontend and the reference-parity scorer read these names from here.
"""

from __future__ import annotations

from typing import Any

STEP_FIELDS = ("agent", "step", "dependence", "dependence_content", "inputs", "outputs")
# The order of a step's fields as the reference evaluator writes a canonical step.
CANONICAL_STEP_ORDER = ("step", "agent", "inputs", "outputs", "dependence", "dependence_content")
# The aliases the reference evaluator renames to a canonical field, in the order it tries them:
# (canonical, alias).
REFERENCE_ALIASES = (
    ("step", "step_index"),
    ("agent", "agent_name"),
    ("dependence", "dependencies"),
    ("dependence_content", "dependency_content"),
)
# Every alias the lowering reads as a field: the reference's, and ``input``, which the
# reference drops instead (the lowering reports both as PC104).
FIELD_ALIASES = {alias: canonical for canonical, alias in REFERENCE_ALIASES} | {"input": "inputs"}
# The fields that mark an object as a DisasterBench plan step: the readers of tool calls and of
# DORA's steps leave an object holding one of them alone.
PLAN_STEP_KEYS = frozenset({"agent", "agent_name", "dependence", "dependence_content", "outputs"})


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

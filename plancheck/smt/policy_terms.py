"""A predicate of a policy rule as a Z3 term over a variable that stands for the value, shared
by the static check and the repair (so both read ``<=``, ``in`` and ``==`` alike, and alike
with :class:`plancheck.policy.semantics.CompiledPredicate`)."""

from __future__ import annotations

from typing import Any

import z3

from plancheck.policy.semantics import is_number


def numeric_holds(var: Any, op: str, bound: Any) -> Any:
    if op in ("in", "not in"):
        inside = z3.Or([var == z3.RealVal(b) for b in bound if is_number(b)]) \
            if isinstance(bound, list) else z3.BoolVal(False)
        return inside if op == "in" else z3.Not(inside)
    if not is_number(bound):  # a number is never equal to, or ordered with, anything else
        return z3.BoolVal(op == "!=")
    value = z3.RealVal(bound)
    return {"<": var < value, "<=": var <= value, ">": var > value, ">=": var >= value,
            "==": var == value, "!=": var != value}[op]


def string_holds(var: Any, op: str, bound: Any) -> Any:
    if op in ("==", "!="):
        equal = var == z3.StringVal(bound) if isinstance(bound, str) else z3.BoolVal(False)
        return equal if op == "==" else z3.Not(equal)
    inside = z3.Or([var == z3.StringVal(b) for b in bound if isinstance(b, str)]) \
        if isinstance(bound, list) else z3.BoolVal(False)
    return inside if op == "in" else z3.Not(inside)

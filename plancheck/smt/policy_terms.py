"""A predicate of a policy rule as a Z3 term over a variable that stands for the value, shared
by the static check and the repair (so both read ``<=``, ``in`` and ``==`` alike, and alike
with :class:`plancheck.policy.semantics.CompiledPredicate`)."""

from __future__ import annotations

from typing import Any

import z3

from plancheck.policy.semantics import is_number


def numeric_holds(var: Any, op: str, bound: Any) -> Any:
    ctx = var.ctx  # (terms are made in the variable's context: a repair has its own)
    if op in ("in", "not in"):
        inside = _any([var == z3.RealVal(b, ctx) for b in bound if is_number(b)], ctx) \
            if isinstance(bound, list) else z3.BoolVal(False, ctx)
        return inside if op == "in" else z3.Not(inside)
    if not is_number(bound):  # a number is never equal to, or ordered with, anything else
        return z3.BoolVal(op == "!=", ctx)
    value = z3.RealVal(bound, ctx)
    return {"<": var < value, "<=": var <= value, ">": var > value, ">=": var >= value,
            "==": var == value, "!=": var != value}[op]


def string_holds(var: Any, op: str, bound: Any) -> Any:
    ctx = var.ctx
    if op in ("==", "!="):
        equal = var == z3.StringVal(bound, ctx) if isinstance(bound, str) \
            else z3.BoolVal(False, ctx)
        return equal if op == "==" else z3.Not(equal)
    inside = _any([var == z3.StringVal(b, ctx) for b in bound if isinstance(b, str)], ctx) \
        if isinstance(bound, list) else z3.BoolVal(False, ctx)
    return inside if op == "in" else z3.Not(inside)


def _any(terms: list[Any], ctx: z3.Context) -> Any:
    """``Or`` of ``terms`` in ``ctx`` (z3's ``Or`` of nothing lands in the shared one)."""
    return z3.Or(*terms) if terms else z3.BoolVal(False, ctx)

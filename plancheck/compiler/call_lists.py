"""What is wrong with a trajectory's list of calls as a whole, before any call is read: the
same for DORA-style trajectories (:mod:`.callshapes`) and DORA's own documents
(:mod:`.dora_native`)."""

from __future__ import annotations

from typing import Any

from plancheck.diagnostics.limits import plan_limit
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.ir.schema import json_type_name

__all__ = ["list_problems", "no_calls"]


def list_problems(calls: Any, root: Span, items: str) -> list[Diagnostic] | None:
    """``PC105`` when ``calls`` is no list (a JSON array of ``items``), ``PC006`` when it is
    past the work limits, else None."""
    if not isinstance(calls, list):
        return [make("PC105", f"expected a trajectory (a JSON array of {items}), found "
                     f"{json_type_name(calls)}", primary=root, label="not an array")]
    too_large = plan_limit(calls, root, what="calls")
    return None if too_large is None else [too_large]


def no_calls(root: Span) -> Diagnostic:
    """``PC112`` for a trajectory without calls."""
    return make("PC112", "the trajectory has no calls", primary=root, label="empty")

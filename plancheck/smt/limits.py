"""The constraint solver's limits, shared by repair, explanation and synthesis: a time limit
(:class:`Deadline`, :class:`SolverTimeout`) and a size limit on the work a repair may take on,
each with the ``PC405`` that says it was reached."""

from __future__ import annotations

import time

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.nodes import Plan

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MAX_REPAIR_CANDIDATES",
    "Deadline",
    "SolverTimeout",
    "repair_size",
    "timeout_diagnostic",
    "too_large_diagnostic",
]

DEFAULT_TIMEOUT_MS = 2000


class SolverTimeout(Exception):
    """Z3 did not answer within the time limit."""


class Deadline:
    def __init__(self, timeout_ms: int) -> None:
        self.end = time.monotonic() + max(timeout_ms, 0) / 1000

    def remaining_ms(self) -> int:
        left = int((self.end - time.monotonic()) * 1000)
        if left <= 0:
            raise SolverTimeout
        return left

    def check(self) -> None:
        """Raise :class:`SolverTimeout` once the time is up. Building constraints in Python is
        not interrupted by Z3's timeout, so loops that build them call this as they go."""
        if time.monotonic() >= self.end:
            raise SolverTimeout


# Work a repair may take on before it starts: (step, input, earlier output) triples examined.
# Past it the answer is a PC405 at once (the plan is too large), not seconds of building
# constraints that the time limit would cut anyway; memory stays bounded with it.
MAX_REPAIR_CANDIDATES = 500_000


def too_large_diagnostic(plan: Plan, what: str, size: int, limit: int) -> Diagnostic:
    return make(
        "PC405",
        f"the plan is too large for the constraint solver's {what} ({len(plan.steps)} steps, "
        f"about {size:,} candidate bindings; the limit is {limit:,})",
        primary=plan.span,
        label=f"no {what} computed",
        notes=["every other check still ran; split the plan to have it explained or repaired"],
        data={"task": what, "size": size, "limit": limit},
    )


def repair_size(plan: Plan) -> int:
    """The (consumer input, earlier step) pairs a repair weighs: quadratic in the steps."""
    return sum(max(len(step.args), 1) * step.position for step in plan.steps)


def timeout_diagnostic(plan: Plan, what: str, timeout_ms: int) -> Diagnostic:
    return make(
        "PC405",
        f"the constraint solver did not finish the {what} within {timeout_ms} ms",
        primary=plan.span,
        label=f"no {what} computed",
        help=["raise the limit with --timeout-ms"],
        data={"timeout_ms": timeout_ms, "task": what},
    )

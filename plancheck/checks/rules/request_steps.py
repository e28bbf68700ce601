"""The plan's calls held against the steps the request asks for: the count of the steps it
numbers, and of the actions it chains with sequence words (a lower bound: an action may take
several calls), and the order in which it gives its inputs (only between calls that do not
depend on each other, whose order the plan was free to choose)."""

from __future__ import annotations

from plancheck.checks.request import Request
from plancheck.checks.request_values import text_literals
from plancheck.checks.rule import Rule
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.nodes import Plan, Step, Toolset


class RequestSteps(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("request steps", "request", ("PC903", "PC904"), hooks=(),
                         option="request")

    def check_request(self, plan: Plan, toolset: Toolset, request: Request,
                      copied: frozenset[tuple[int, str]]) -> list[Diagnostic]:
        if not plan.steps:
            return []
        found: list[Diagnostic] = []
        asked, made = len(request.steps), len(plan.steps)
        chained = len(request.chained)
        if chained > made:  # (an action may take more than one call: only fewer is a miss)
            found.append(make(
                "PC903", f"the request chains {chained} actions and the plan makes {made} "
                f"call{'s' if made != 1 else ''}",
                primary=plan.span, label="fewer calls than the request's actions",
                notes=tuple(f"action {n}: {text[:120]}" for n, text in
                            enumerate(request.chained, 1)),
                help=("an action the request asks for is missing: the plan may stop early",),
                data={"asked": chained, "made": made}))
        if asked and asked != made:
            what = "fewer" if made < asked else "more"
            found.append(make(
                "PC903", f"the request numbers {asked} steps and the plan makes {made} calls",
                primary=plan.span, label=f"{what} calls than the request's steps",
                notes=tuple(f"step {n}: {text[:120]}" for n, text in
                            enumerate(request.steps, 1)),
                help=("a step the request asks for is missing" if made < asked else
                      "a call the request does not ask for was added",),
                data={"asked": asked, "made": made}))
        inverted = _first_inversion(plan, toolset, request)
        if inverted is not None:
            early, late, early_input, late_input = inverted
            found.append(make(
                "PC904",
                f"step {early.position} (`{early.tool}`) reads `{early_input}` before step "
                f"{late.position} (`{late.tool}`) reads `{late_input}`, which the request "
                f"gives first",
                primary=early.span, label="reads a later input of the request first",
                secondary=((late.span, "reads an earlier one"),),
                data={"step": early.position, "other_step": late.position}))
        return found


# The calls reading the request's inputs compared pairwise, at most (the first ones).
_COMPARED = 64


def _first_inversion(plan: Plan, toolset: Toolset, request: Request
                     ) -> tuple[Step, Step, str, str] | None:
    """The first pair of independent calls that read the request's inputs in the opposite
    order to the request, with the inputs each reads first (None: there is none)."""
    inputs = request.inputs
    if len(inputs) < 2:
        return None
    rank = {mention.text.lower(): at for at, mention in enumerate(inputs)}
    read: dict[int, set[int]] = {}  # position -> the inputs (by the request's order) it reads
    for literal in text_literals(plan, toolset):
        at = rank.get(literal.value.strip().lower())
        if at is not None:
            read.setdefault(literal.step.position, set()).add(at)
    reading = sorted(read.items())[:_COMPARED]
    parents = _parents(plan)
    steps = {step.position: step for step in plan.steps}
    for i, (position, ats) in enumerate(reading):
        at = min(ats)
        for other, other_ats in reading[i + 1:]:
            other_at = min(other_ats)
            # Calls sharing an input (one reads both images, the other one of them) are in
            # no order the request decides.
            if other_at < at and ats.isdisjoint(other_ats) and \
                    not _reads_from(other, position, parents):
                return steps[position], steps[other], inputs[at].text, inputs[other_at].text
    return None


def _parents(plan: Plan) -> dict[int, list[int]]:
    """Each step's position -> the positions of the steps whose results it reads."""
    by_number = {step.index: step.position for step in plan.steps if step.index is not None}
    return {step.position: [by_number[r.step] for _, r in step.references()
                            if r.step in by_number] for step in plan.steps}


def _reads_from(position: int, earlier: int, parents: dict[int, list[int]]) -> bool:
    """Whether the step at ``position`` reads, directly or not, the results of the one at
    ``earlier`` (only steps after ``earlier`` are walked)."""
    pending, seen = [position], {position}
    while pending:
        for parent in parents.get(pending.pop(), ()):
            if parent == earlier:
                return True
            if parent > earlier and parent not in seen:
                seen.add(parent)
                pending.append(parent)
    return False

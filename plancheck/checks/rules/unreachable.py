"""Walks back from the plan's last step along the producers each step reads (gathered step by
step, settled or lowered) once the last step is seen; a step the walk never reaches is
reported. Off by default, and run only with symbolic execution (its option)."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.interp.checks import unreachable_steps


class Unreachable(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("unreachable", "unreachable", ("PC503",),
                         hooks=("start", "settled", "lowered", "finish"), option="unreachable")

    def start(self, context: CheckContext) -> None:
        context.state[self.name] = {}  # consumer position -> the positions it reads

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        fed_by = context.state[self.name]
        for view in views:
            if view.producers:
                fed_by[view.position] = list(view.producers)

    def lowered(self, view: StepView, context: CheckContext) -> None:
        found = view.refs
        assert found is not None, "the references rule runs first"
        if found.links:
            context.state[self.name][view.position] = [link.producer for link in found.links]

    def finish(self, context: CheckContext) -> None:
        unreachable_steps(context.facts, context.state[self.name], context.findings)

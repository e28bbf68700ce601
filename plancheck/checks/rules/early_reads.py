"""Runs the plan's data flow in the order the steps are listed: a read is early when the step
that makes its value has not run yet. The flow it builds (which results were consumed) is what
later rules read. A settled step reads earlier steps of known tools, all of whose outputs are
made, so its reads are only recorded."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView


class EarlyReads(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("early reads", "early reads", ("PC501",), hooks=("settled", "lowered"),
                         needs=("flow",), option="interpret")

    def lowered(self, view: StepView, context: CheckContext) -> None:
        flow, step = context.flow, view.ir
        assert flow is not None, "declared: needs the flow"
        assert step is not None, "a step that is not settled has its IR"
        flow.run_step(step, context.toolset, context.findings)

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        flow = context.flow
        assert flow is not None, "declared: needs the flow"
        for view in views:
            # A settled step's references read earlier steps of known tools, all of whose
            # outputs are made: none is read early.
            index, signature = view.index, view.signature
            assert index is not None and signature is not None
            flow.run_reads(index, view.reads, signature.output_names)

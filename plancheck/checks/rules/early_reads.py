"""PC501: a result read before the step that makes it runs (run in the order listed). Runs
the plan's data flow, which later rules read (which results were consumed)."""

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

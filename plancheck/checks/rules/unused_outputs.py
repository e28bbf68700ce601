"""PC502: an output no later step reads, on a step some of whose other outputs are read."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.interp.checks import unused_outputs


class UnusedOutputs(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("unused outputs", "unused outputs", ("PC502",), hooks=("finish",),
                         needs=("flow",), option="interpret")

    def finish(self, context: CheckContext) -> None:
        flow = context.flow
        assert flow is not None, "declared: needs the flow"
        unused_outputs(context.facts, flow.consumed, context.findings,
                       fields_of_one_response=context.toolset.outputs_are_fields)

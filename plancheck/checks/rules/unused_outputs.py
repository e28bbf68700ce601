"""Read from the data flow once the last step is seen (which results were consumed), on the
steps of known tools with two outputs or more: a lone output is used or is the step's result,
and a step none of whose results is read is the reachability rule's concern. Nothing in an
API-style pool, whose outputs are fields of one response: reading some and not others is what
API calls do."""

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

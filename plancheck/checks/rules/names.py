"""Each step's tool, and its input and output keys, held against the tool's signature in the
pool. A step whose inputs pass is checked from its JSON; any other is lowered, and the resolver
reports on its IR."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.diagnostics.model import Diagnostic
from plancheck.ir.nodes import ToolSignature
from plancheck.typecheck.names import (
    PlanFacts,
    inputs_pass,
    outputs_differ,
    wrong_outputs_diagnostic,
)


class ToolsAndKeys(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("names", "names", ("PC201", "PC202", "PC203", "PC204"),
                         hooks=("clean", "settled", "lowered"))

    def clean(self, views: list[StepView], context: CheckContext) -> None:
        for view in views:
            fields, signature = view.fields, view.signature
            assert fields is not None and signature is not None
            if not inputs_pass(fields[4].keys(), signature):
                view.settled = False

    def lowered(self, view: StepView, context: CheckContext) -> None:
        step = view.ir
        assert step is not None, "a step that is not settled has its IR"
        context.resolver.check_step(step, context.findings)

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        for view in views:
            fields, signature = view.fields, view.signature
            assert fields is not None and signature is not None
            if outputs_differ(fields[5], signature):
                context.findings.report("PC204", _wrong_outputs, context.facts, view.position,
                                        signature)


def _wrong_outputs(facts: PlanFacts, position: int, tool: ToolSignature) -> Diagnostic:
    """``PC204`` on a settled step: the step is lowered now, and the diagnostic built as for
    a lowered one."""
    return wrong_outputs_diagnostic(facts.step(position), tool)

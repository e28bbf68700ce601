"""Why: a value the model left out while writing a call often comes out as ``""`` or blanks.
An API may take an empty string on purpose, so the code is off by default and the rule runs
only when it is selected. The rule declares its code where it is (a rule is one module)."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.diagnostics.codes import CodeInfo
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.ir.nodes import Literal
from plancheck.typecheck.names import PlanFacts

PC210 = CodeInfo(
    "PC210", "empty-argument", Severity.WARNING, "An argument is the empty string.",
    "A step passes an input as the empty string (or only blanks): a value left out while the "
    "call was written. Pass the value, or leave the input out when the tool does not need it.",
    default_enabled=False)


class EmptyArguments(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("empty arguments", "names", (PC210,), hooks=("settled", "lowered"))

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        for view in views:
            for name, value in view.literals:
                if not value.strip():
                    context.findings.report("PC210", _empty, context.facts, view.position,
                                            name)

    def lowered(self, view: StepView, context: CheckContext) -> None:
        for argument in view.step().args:
            value = argument.value
            if isinstance(value, Literal) and isinstance(value.value, str) and \
                    not value.value.strip():
                context.findings.report("PC210", _empty, context.facts, view.position,
                                        argument.name)


def _empty(facts: PlanFacts, position: int, name: str) -> Diagnostic:
    step = facts.step(position)
    argument = next((a for a in step.args if a.name == name), None)
    where = f"step {step.index}" if step.index is not None else f"the step at {position}"
    return make("PC210", f"{where} passes `{name}` as the empty string",
                primary=argument.span if argument is not None else step.span,
                label="an empty value", help=[f"pass a value for `{name}`, or leave it out"],
                data={"step": step.index, "position": position, "tool": step.tool,
                      "key": name})


RULE = EmptyArguments()

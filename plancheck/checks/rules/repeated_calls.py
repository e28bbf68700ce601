"""PC504: a step that calls the same tool with the same inputs as an earlier step. Tools are
taken to be deterministic, so the second call computes what the first did; a model that
loses track of what it has planned writes such steps. A call that passes no input at all is
not compared: its missing inputs are the finding (PC203), not the repeat."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.references import format_reference
from plancheck.typecheck.names import PlanFacts


class RepeatedCalls(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("repeated calls", "repeated calls", ("PC504",),
                         hooks=("start", "step"), option="interpret")

    def start(self, context: CheckContext) -> None:
        context.state[self.name] = {}  # tool -> the steps that called it so far

    def step(self, view: StepView, context: CheckContext) -> None:
        tool = view.tool
        if tool is None:
            return
        calls: dict[str, list[StepView]] = context.state[self.name]
        earlier = calls.get(tool)
        if earlier is None:  # the common case: a tool's first call, nothing to compare
            calls[tool] = [view]
            return
        key = view.call_key()
        if key is not None:
            for other in earlier:
                if other.call_key() == key:
                    context.findings.report("PC504", _repeated_call, context.facts,
                                            view.position, other.position)
                    break
        earlier.append(view)


def _repeated_call(facts: PlanFacts, position: int, first_position: int) -> Diagnostic:
    step, first = facts.step(position), facts.step(first_position)
    label = str(first.index) if first.index is not None else f"at position {first_position}"
    outputs = list(first.outputs or ())
    help = [f"read the results of step {label} instead"
            + (f" (`{format_reference(first.index, outputs[0])}`)"
               if first.index is not None and outputs else "")
            + ", or drop this step"]
    return make(
        "PC504",
        f"step {step.index if step.index is not None else f'at position {position}'} calls "
        f"`{step.tool}` with the same inputs as step {label}",
        primary=step.tool_span or step.span,
        label="the same call again",
        secondary=[(first.tool_span or first.span, f"first called by step {label}")],
        notes=["a tool given the same inputs computes the same results"],
        help=help,
        data={"step": step.index, "position": position, "tool": step.tool,
              "same_as": first.index, "same_as_position": first_position},
    )

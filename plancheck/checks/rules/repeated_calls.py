"""Compares each call's tool and inputs with those of the calls before it. Tools are taken to
be deterministic, so a second identical call computes what the first did; a model that loses
track of what it has planned writes such steps. A call that passes no input at all is not
compared: its missing inputs are the finding (PC203), not the repeat. Nor are the calls of an
API-style pool (MCP, OpenAI: :attr:`~plancheck.ir.nodes.Toolset.outputs_are_fields`), whose
tools act on a state that other calls change: reading it again after a write is meant.
"""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import CallKey, StepView
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.references import format_reference
from plancheck.typecheck.names import PlanFacts


class RepeatedCalls(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("repeated calls", "repeated calls", ("PC504",),
                         hooks=("start", "step"), option="interpret")

    def start(self, context: CheckContext) -> None:
        # tool -> its first step, or once it is called again, each call's first step by what
        # it passes (None: the pool's calls are not compared)
        context.state[self.name] = None if context.toolset.outputs_are_fields else {}

    def step(self, view: StepView, context: CheckContext) -> None:
        tool = view.tool
        calls: dict[str, StepView | dict[CallKey, int]] | None = context.state[self.name]
        if tool is None or calls is None:
            return
        earlier = calls.get(tool)
        if earlier is None:  # the common case: a tool's first call, nothing to compare
            calls[tool] = view
            return
        if isinstance(earlier, StepView):  # called again: compare what the calls pass
            first, earlier = earlier, {}
            first_key = first.call_key()
            if first_key is not None:
                earlier[first_key] = first.position
            calls[tool] = earlier
        key = view.call_key()
        if key is None:
            return
        first_position = earlier.get(key)
        if first_position is None:
            earlier[key] = view.position
        else:
            context.findings.report("PC504", _repeated_call, context.facts, view.position,
                                    first_position)


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

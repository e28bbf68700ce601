"""The kinds of values bound to inputs: a reference's producing output and a literal, each
against the input's declared type through the pool's type tables, and a binding against the
flows the workflow graph declares between tools. Run unless the type checks are switched off;
a step whose literals are plain paths of fitting kinds stays settled."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.diagnostics.model import Diagnostic
from plancheck.ir.nodes import Reference, Toolset, ToolSignature
from plancheck.typecheck.names import Link, PlanFacts
from plancheck.typecheck.types import check_step_types, reference_diagnostic


class Types(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("types", "types", ("PC301", "PC302", "PC303", "PC304"),
                         hooks=("clean", "settled", "lowered"), option="types")

    def clean(self, views: list[StepView], context: CheckContext) -> None:
        """Keeps those whose every literal is a plain path of a fitting kind."""
        tables = context.tables
        assert tables is not None, "candidate steps"
        for view in views:
            if not view.settled:  # (its inputs may not even be the tool's)
                continue
            entry = view.entry
            assert entry is not None, "a candidate step"
            params = entry.params
            for name, value in view.literals:
                if not tables.literal_passes(value, params[name]):
                    view.settled = False
                    break

    def lowered(self, view: StepView, context: CheckContext) -> None:
        signature = view.signature
        if signature is not None:
            step, found, facts = view.ir, view.refs, context.facts
            assert step is not None, "a step that is not settled has its IR"
            assert found is not None, "the references rule runs first"
            check_step_types(step, signature, found.links, facts.tools, facts,
                             context.toolset, context.findings)

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        facts, tables = context.facts, context.tables
        tools = facts.tools
        assert tables is not None, "settled steps"
        for view in views:
            reads = view.reads
            if not reads:
                continue
            entry = view.entry
            assert entry is not None, "a settled step"
            producers = view.producers
            for read, (name, (_, key)) in enumerate(reads):
                producer_tool = tools[producers[read]]
                for code in entry.reads(name, producer_tool, key, tables):
                    context.findings.report(code, _reference_finding, code, facts,
                                            view.position, name, producer_tool,
                                            entry.signature, tables.toolset)


def _reference_finding(code: str, facts: PlanFacts, position: int, name: str,
                       producer_tool: ToolSignature, tool: ToolSignature, toolset: Toolset
                       ) -> Diagnostic:
    """A type finding on a reference of a settled step: the step is lowered now, and the
    diagnostic built as for a lowered one."""
    step = facts.step(position)
    argument = next(a for a in step.args if a.name == name)
    reference = argument.value
    assert isinstance(reference, Reference)
    producer = facts.earlier(position, reference.step)
    assert producer is not None
    output = producer_tool.output(reference.key)
    param = tool.input(name)
    assert param is not None
    link = Link(argument, reference, producer, output)
    return reference_diagnostic(code, step, link, param, tool, producer_tool, toolset, facts)

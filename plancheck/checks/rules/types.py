"""PC301-PC304: a reference or literal of the wrong type, implicit conversions, bindings
along a tool pair the declared flows do not list."""

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

    def clean(self, view: StepView, context: CheckContext) -> bool:
        """Every literal is a plain path of a fitting kind."""
        entry, tables = view.entry, context.tables
        assert entry is not None and tables is not None, "a candidate step"
        passes, params = tables.literal_passes, entry.params
        for name, value, parts in view.bindings:
            if parts is None and not passes(value, params[name]):
                return False
        return True

    def lowered(self, view: StepView, context: CheckContext) -> None:
        signature = view.signature
        if signature is not None:
            step, found, facts = view.ir, view.refs, context.facts
            assert step is not None, "a step that is not settled has its IR"
            assert found is not None, "the references rule runs first"
            check_step_types(step, signature, found.links, facts.tools, facts,
                             context.toolset, context.findings)

    def settled(self, view: StepView, context: CheckContext) -> None:
        facts = context.facts
        entry, tables, tools = view.entry, context.tables, facts.tools
        assert entry is not None and tables is not None, "a settled step"
        producers, read = view.producers, 0
        for name, _, parts in view.bindings:
            if parts is None:
                continue
            producer_tool = tools[producers[read]]
            read += 1
            codes = entry.reads(name, producer_tool, parts[1], tables)
            for code in codes:
                context.findings.report(code, _reference_finding, code, facts, view.position,
                                        name, producer_tool, entry.signature, tables.toolset)


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

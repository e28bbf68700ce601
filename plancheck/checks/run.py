"""The one walk over a plan's steps that runs every rule of a :class:`RuleSet`."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.registry import RuleSet
from plancheck.checks.tables import Tables
from plancheck.checks.view import StepView
from plancheck.diagnostics.findings import Findings
from plancheck.interp.checks import DataFlow
from plancheck.ir.nodes import Toolset
from plancheck.typecheck.names import PlanFacts

__all__ = ["OnePass"]


class OnePass:
    """Runs the rules of ``rules`` over one plan: :meth:`start` once the facts of every step
    are in ``facts``, :meth:`step` on each step in the order listed, :meth:`finish`. What they
    find goes to ``findings``, each finding under its rule's phase."""

    __slots__ = ("context", "rules")

    def __init__(self, facts: PlanFacts, toolset: Toolset, findings: Findings, tables: Tables,
                 rules: RuleSet) -> None:
        self.rules = rules
        self.context = CheckContext(facts, toolset, findings, tables,
                                    DataFlow(facts) if rules.needs_flow else None)

    def start(self) -> None:
        context = self.context
        findings = context.findings
        for rule in self.rules.starters:
            findings.phase = rule.rank
            rule.start(context)

    def step(self, view: StepView) -> None:
        """Check one step; a candidate (a step read from JSON) is settled when every rule
        finds it clean."""
        context = self.context
        if view.entry is not None and view.read_inputs():
            for rule in self.rules.cleaners:
                if not rule.clean(view, context):
                    break
            else:
                view.settled = True
        findings = context.findings
        for rule in self.rules.steppers:
            findings.phase = rule.rank
            rule.step(view, context)

    def finish(self) -> None:
        context = self.context
        findings = context.findings
        for rule in self.rules.finishers:
            findings.phase = rule.rank
            rule.finish(context)

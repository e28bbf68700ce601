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


class OnePass(CheckContext):
    """Runs the rules of ``rules`` over one plan: :meth:`start` once the facts of every step
    are in ``facts``, :meth:`step` on each step in the order listed, :meth:`finish`. What they
    find goes to ``findings``, each finding under its rule's phase. The walk is itself the
    context the rules read."""

    __slots__ = ("rules",)

    def __init__(self, facts: PlanFacts, toolset: Toolset, findings: Findings,
                 tables: Tables | None, rules: RuleSet) -> None:
        super().__init__(facts, toolset, findings, tables,
                         DataFlow(facts) if rules.needs_flow else None)
        self.rules = rules

    def start(self) -> None:
        findings = self.findings
        for rank, start in self.rules.start_hooks:
            findings.phase = rank
            start(self)

    def step(self, view: StepView) -> None:
        """Check one step; a candidate (a step read from JSON) is settled when every rule
        finds it clean, else its IR is made."""
        findings = self.findings
        rules = self.rules
        tables = self.tables
        if view.entry is not None and tables is not None and view.read_inputs(tables.literals):
            for clean in rules.clean_hooks:
                if not clean(view, self):
                    break
            else:
                view.settled = True
                for rank, hook in rules.settled_hooks:
                    findings.phase = rank
                    hook(view, self)
                return
        if view.ir is None:
            view.ir = self.facts.step(view.position)
        for rank, hook in rules.lowered_hooks:
            findings.phase = rank
            hook(view, self)

    def finish(self) -> None:
        findings = self.findings
        for rank, finish in self.rules.finish_hooks:
            findings.phase = rank
            finish(self)

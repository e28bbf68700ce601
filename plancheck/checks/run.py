"""The one walk over a plan's steps that runs every rule of a :class:`RuleSet`."""

from __future__ import annotations

from collections.abc import Iterable

from plancheck.checks.context import CheckContext
from plancheck.checks.registry import RuleSet
from plancheck.checks.tables import Tables
from plancheck.checks.view import StepView
from plancheck.diagnostics.findings import Findings
from plancheck.interp.checks import DataFlow
from plancheck.ir.nodes import Step, Toolset
from plancheck.typecheck.names import PlanFacts

__all__ = ["OnePass"]


class OnePass(CheckContext):
    """Runs the rules of ``rules`` over one plan, once the facts of every step are in
    ``facts``: :meth:`run_steps` over a lowered plan's steps, :meth:`run_views` over the views
    of a plan read from JSON. What they find goes to ``findings``, each finding under its
    rule's phase. The walk is itself the context the rules read.

    Each walk is one loop with the hooks' calls inline (no call per step into the walk
    itself): the plain-Python build pays for every call, and a plan of three steps makes
    some thirty hook calls."""

    __slots__ = ("rules",)

    def __init__(self, facts: PlanFacts, toolset: Toolset, findings: Findings,
                 tables: Tables | None, rules: RuleSet) -> None:
        super().__init__(facts, toolset, findings, tables,
                         DataFlow(facts) if rules.needs_flow else None)
        self.rules = rules

    def run_steps(self, steps: Iterable[Step]) -> None:
        """Check the steps of a lowered plan, each with its IR, in the order listed."""
        facts, findings, hooks = self.facts, self.findings, self.rules.lowered_hooks
        tools = facts.tools
        self._start()
        for step in steps:
            position = step.position
            view = StepView(facts, position, step.index, step.tool, tools.get(position), step)
            for rank, hook in hooks:
                findings.phase = rank
                hook(view, self)
        self._finish()

    def run_views(self, views: Iterable[StepView]) -> None:
        """Check the steps of a plan read from JSON, in the order listed. A candidate (see
        :mod:`.view`) is settled when every rule finds it clean; any other step's IR is made
        (if it has none yet) and the hooks of a step that is not settled run on it."""
        facts, findings, rules, tables = self.facts, self.findings, self.rules, self.tables
        cleaners, settled, lowered = rules.clean_hooks, rules.settled_hooks, rules.lowered_hooks
        literals = tables.literals if tables is not None else None
        self._start()
        for view in views:
            if view.entry is not None and literals is not None and view.read_inputs(literals):
                for clean in cleaners:
                    if not clean(view, self):
                        break
                else:
                    view.settled = True
                    for rank, hook in settled:
                        findings.phase = rank
                        hook(view, self)
                    continue
            if view.ir is None:
                view.ir = facts.step(view.position)
            for rank, hook in lowered:
                findings.phase = rank
                hook(view, self)
        self._finish()

    def _start(self) -> None:
        findings = self.findings
        for rank, start in self.rules.start_hooks:
            findings.phase = rank
            start(self)

    def _finish(self) -> None:
        findings = self.findings
        for rank, finish in self.rules.finish_hooks:
            findings.phase = rank
            finish(self)

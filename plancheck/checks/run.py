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
    itself), and over a plan read from JSON each rule's clean hook and settled hook is called
    once for all the steps it applies to (a run of consecutive settled steps; most plans are
    one run): the plain-Python build pays for every call."""

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

    def run_views(self, views: list[StepView]) -> None:
        """Check the steps of a plan read from JSON, in the order listed. A candidate (see
        :mod:`.view`) is settled unless some rule's clean hook unsettles it, and the settled hooks
        run on each run of consecutive settled steps; any other step's IR is made (if it has
        none yet) and the hooks of a step that is not settled run on it."""
        facts, findings, rules, tables = self.facts, self.findings, self.rules, self.tables
        settled, lowered = rules.settled_rules, rules.lowered_hooks
        if tables is not None:
            literals = tables.literals
            candidates = [view for view in views
                          if view.entry is not None and view.read_inputs(literals)]
            for view in candidates:
                view.settled = True  # until a rule's clean hook says otherwise
            if candidates:
                for cleaner in rules.clean_rules:
                    cleaner.clean(candidates, self)
            if len(candidates) == len(views):
                for view in views:
                    if not view.settled:
                        break
                else:  # the common case: one run of every step
                    self._start()
                    for rule in settled:
                        findings.phase = rule.rank
                        rule.settled(views, self)
                    self._finish()
                    return
        self._start()
        count, first = len(views), 0
        while first < count:
            view = views[first]
            if view.settled:
                end = first + 1
                while end < count and views[end].settled:
                    end += 1
                run = views[first:end]
                for rule in settled:
                    findings.phase = rule.rank
                    rule.settled(run, self)
                first = end
                continue
            if view.ir is None:
                view.ir = facts.step(view.position)
            for rank, hook in lowered:
                findings.phase = rank
                hook(view, self)
            first += 1
        self._finish()

    def _start(self) -> None:
        findings = self.findings
        for rule in self.rules.start_rules:
            findings.phase = rule.rank
            rule.start(self)

    def _finish(self) -> None:
        findings = self.findings
        for rule in self.rules.finish_rules:
            findings.phase = rule.rank
            rule.finish(self)

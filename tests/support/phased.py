"""The oracle of the fused checker: every registered rule run over the whole plan, one phase
after the other, on the lowered plan (no JSON fast path).

``plancheck.compiler.checker`` runs all the rules in one walk over the steps, settling clean
steps straight from their JSON; the property tests of ``tests/compiler/test_checker.py`` hold
it to what this reports: the same diagnostics in the same order. A rule added to the registry
is checked here with no more wiring.
"""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.registry import rule_set
from plancheck.checks.view import StepView
from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.model import Diagnostic
from plancheck.interp.checks import DataFlow
from plancheck.ir.nodes import Plan, Toolset
from plancheck.typecheck.names import PlanFacts


def check_phase_by_phase(plan: Plan, toolset: Toolset, *, types: bool = True,
                         interpret: bool = True, unreachable: bool = False,
                         kept: frozenset[str] = frozenset()) -> list[Diagnostic]:
    """The plan's diagnostics with each rule run over every step before the next rule starts
    (rules in phase order), each phase's diagnostics built before the next phase runs.
    ``kept``: the codes selected, whose rules run though they are off by default."""
    rules = rule_set(types=types, interpret=interpret, unreachable=unreachable, kept=kept)
    facts = PlanFacts.of_plan(plan, toolset)
    views = [StepView.of_step(facts, step) for step in plan.steps]
    flow = DataFlow(facts) if rules.needs_flow else None
    found: list[Diagnostic] = []
    state: dict[str, object] = {}
    for rule in rules.rules:
        context = CheckContext(facts, toolset, Findings(), None, flow)
        context.state = state
        if "start" in rule.hooks:
            rule.start(context)
        if "step" in rule.hooks:
            for view in views:
                rule.step(view, context)
        if "lowered" in rule.hooks:
            for view in views:
                rule.lowered(view, context)
        if "finish" in rule.hooks:
            rule.finish(context)
        found.extend(context.findings.diagnostics())
    return found

"""The steps' declared ``dependence`` and ``dependence_content`` held against the references
their inputs make, as the references rule (which runs first) resolved them, and against the
pool's limit on predecessors. A settled step that reads one result and declares exactly that
one is passed by a comparison, without building the sets (most steps are such)."""

from __future__ import annotations

from typing import Final

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.diagnostics.model import Diagnostic
from plancheck.typecheck.deps import (
    check_step_dependencies,
    dependence_codes,
    dependence_diagnostic,
)
from plancheck.typecheck.names import PlanFacts

_NO_DEPENDENCE: Final = [-1]


class Dependencies(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("dependencies", "dependencies", ("PC401", "PC402", "PC403"),
                         hooks=("settled", "lowered"))

    def lowered(self, view: StepView, context: CheckContext) -> None:
        step, found = view.ir, view.refs
        assert step is not None, "a step that is not settled has its IR"
        assert found is not None, "the references rule runs first"
        check_step_dependencies(step, found.referenced, found.broken, found.unkeyed,
                                context.toolset.max_predecessors, context.findings)

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        limit = context.toolset.max_predecessors
        unlimited = limit is None or limit >= 0
        one_allowed = limit is None or limit >= 1
        for view in views:
            fields = view.fields
            assert fields is not None
            dependence, content = fields[2], fields[3]
            reads = view.reads
            if len(reads) == 1:
                # The most common step: one reference, declared as such (what dependence_codes
                # finds then, without building the sets).
                number, key = reads[0][1]
                if one_allowed and content is not None and len(content) == 1 \
                        and len(dependence) == 1 and dependence[0] == number:
                    declared = content.get(number)
                    if declared is not None and len(declared) == 1 and declared[0] == key:
                        continue
            elif not reads and content is None and unlimited and dependence == _NO_DEPENDENCE:
                continue  # reads nothing and declares so: what dependence_codes finds then
            consumed: dict[int, set[str]] = {}
            for _, (number, key) in reads:
                keys = consumed.get(number)
                if keys is None:
                    consumed[number] = {key}
                else:
                    keys.add(key)
            codes = dependence_codes(dependence, content, consumed.keys(), consumed, False,
                                     limit)
            if codes:
                findings = context.findings
                for code in codes:
                    findings.report(code, _dependence_finding, code, context.facts,
                                    view.position, set(consumed), limit)


def _dependence_finding(code: str, facts: PlanFacts, position: int, referenced: set[int],
                        limit: int | None) -> Diagnostic:
    """A dependency finding on a settled step: the step is lowered now."""
    return dependence_diagnostic(code, facts.step(position), referenced, limit)

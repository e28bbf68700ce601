"""What the rules share while one plan is checked: the facts about its steps, the toolset and
its tables, the findings, and the facts some rules build for others (the name resolver, the
data flow) or keep for themselves (:attr:`CheckContext.state`)."""

from __future__ import annotations

from typing import Any

from plancheck.checks.tables import Tables
from plancheck.diagnostics.findings import Findings
from plancheck.interp.checks import DataFlow
from plancheck.ir.nodes import Toolset
from plancheck.typecheck.names import NameResolver, PlanFacts

__all__ = ["CheckContext"]


class CheckContext:
    """The state of one check of one plan. ``tables``: the toolset's tables (None when no
    step is read from JSON: a lowered plan's); ``flow`` is the data flow so far (None when no
    rule run needs it); ``state`` holds what a rule keeps between steps, under its name."""

    __slots__ = ("facts", "findings", "flow", "resolver", "state", "tables", "toolset")

    def __init__(self, facts: PlanFacts, toolset: Toolset, findings: Findings,
                 tables: Tables | None, flow: DataFlow | None) -> None:
        self.facts = facts
        self.toolset = toolset
        self.findings = findings
        self.tables = tables
        self.flow = flow
        self.state: dict[str, Any] = {}
        self.resolver = NameResolver(self.facts, self.toolset)  # the name checks of the plan

"""Policy violations as diagnostics: the rule's code and severity, a label at the call in the
plan, labels at the earlier calls and facts that cause it, and where the policy file states
the rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span
from plancheck.dsl.policy_ast import Rule
from plancheck.ir.nodes import Plan, Step
from plancheck.policy.semantics import CONTAINED, EXACT, NAMED, Violation
from plancheck.records import FrozenRecord


class Fact(FrozenRecord):
    """One thing a trace says, as the static check explains a violation with it: ``tool``
    (step ``position`` calls ``detail``), ``value`` (argument ``detail`` of step ``position``
    has the value it has), ``flow`` (argument ``detail`` of step ``position`` reads the result
    of step ``source``) or an inferred flow, ``exact`` or ``contained`` (it holds a copy of a
    value of that result, or text of it)."""

    __slots__ = _fields = ("kind", "position", "detail", "source")

    def __init__(self, kind: str, position: int, detail: str, source: int = -1) -> None:
        self.kind = kind
        self.position = position
        self.detail = detail
        self.source = source

    def describe(self, plan: Plan) -> str:
        step = _number(plan, self.position)
        if self.kind == "tool":
            return f"step {step} calls `{self.detail}`"
        if self.kind == "value":
            return f"`{self.detail}` of step {step} has this value"
        source = _number(plan, self.source)
        if self.kind == EXACT:
            return f"`{self.detail}` of step {step} equals a value of the result of step {source}"
        if self.kind == CONTAINED:
            return f"`{self.detail}` of step {step} holds text of the result of step {source}"
        return f"`{self.detail}` of step {step} reads the result of step {source}"


MAX_FACT_LABELS = 12  # labels for the facts of a cause; the data has every one


def rule_place(rule: Rule, policy_file: str) -> tuple[str, dict[str, Any]]:
    """The note that says where the policy file states ``rule``, and the same as data."""
    where = rule.span
    at = f"{policy_file}:{where.start_line}:{where.start_col}" if where.start_line else \
        policy_file
    return (f"the rule is stated at {at} (policy {rule.policy})",
            {"rule": rule.body(), "policy": rule.policy, "policy_file": policy_file,
             "line": where.start_line, "column": where.start_col})


def _number(plan: Plan, position: int) -> str:
    index = plan.steps[position].index if 0 <= position < len(plan.steps) else None
    return str(position if index is None else index)


def _argument_span(step: Step, path: Sequence[object]) -> Span:
    argument = step.arg(str(path[0])) if path else None
    return argument.span if argument is not None else step.tool_span


def violation_diagnostic(violation: Violation, plan: Plan, policy_file: str,
                         facts: Sequence[Fact] = (), *, minimal: bool = True) -> Diagnostic:
    """The diagnostic of a violation of ``plan`` (positions are the plan's step positions);
    ``facts`` are its cause, a minimal one unless ``minimal`` is False (not computed)."""
    rule = violation.rule
    steps = plan.steps
    if 0 <= violation.index < len(steps):
        primary = _argument_span(steps[violation.index], violation.argument)
        label = f"breaks `{rule.body()}`"
    else:
        primary, label = plan.span, f"never meets `{rule.body()}`"
    secondary: list[tuple[Span, str]] = []
    seen = {primary}
    for position in violation.earlier[-NAMED:]:  # the data lists them all
        span = steps[position].tool_span
        if span not in seen:
            seen.add(span)
            secondary.append((span, f"step {_number(plan, position)} `{steps[position].tool}`"))
    shown = [f for f in facts if not (f.position == violation.index and f.kind == "tool")]
    notes = []
    if len(shown) > MAX_FACT_LABELS:  # the data lists them all
        notes.append(f"{len(shown) - MAX_FACT_LABELS} more facts take part (see the data)")
        shown = shown[-MAX_FACT_LABELS:]
    for fact in shown:
        step = steps[fact.position]
        span = (step.tool_span if fact.kind == "tool"
                else _argument_span(step, fact.detail.split(".")))
        if span not in seen:
            seen.add(span)
            secondary.append((span, fact.describe(plan)))
    note, place = rule_place(rule, policy_file)
    return make(
        violation.code,
        violation.message,
        primary=primary,
        label=label,
        secondary=secondary,
        notes=[note, *notes],
        data={
            **place,
            "step": violation.index,
            "earlier": list(violation.earlier),
            "facts": [fact.describe(plan) for fact in facts],
            "minimal": minimal,
        },
        severity=Severity.WARNING if rule.severity == "warn" else Severity.ERROR,
    )

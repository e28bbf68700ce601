"""The minimum-edit repair of a plan that breaks its policies (``plancheck fix --policy``).

Two kinds of edit: change a literal argument that a predicate constrains (a number, or a
string compared with ``==`` or ``in``; weight 1), or delete a step (weight 2: a call lost is a
bigger change than a value, and a plan keeps at least one step). Z3's optimiser
keeps as many steps and values as it can such that every rule holds on what is left (the
meaning of :mod:`plancheck.policy.semantics`, over the kept steps in their order), a kept step
never reads a deleted one, and a changed number stays as close to the old one as the rule
allows. Calls the plan lacks are never invented: a ``require A`` no step meets, or a predicate
written as a regular expression, has no repair but deleting what breaks it (and none at all for
``require A``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import z3

from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    FLOW,
    FORBID_AFTER,
    REQUIRE_BEFORE,
    REQUIRE_CALL,
    Rule,
)
from plancheck.ir.nodes import Plan
from plancheck.ir.references import REFERENCE_RE, format_reference
from plancheck.policy.loader import PolicySet
from plancheck.policy.plan_calls import plan_calls
from plancheck.policy.semantics import (
    MISSING,
    CompiledPredicate,
    Matcher,
    PolicyCall,
    is_number,
    lookup,
    path_overlaps,
)
from plancheck.smt.limits import DEFAULT_TIMEOUT_MS, Deadline, SolverTimeout
from plancheck.smt.policy_terms import numeric_holds, string_holds

DELETE_WEIGHT = 2


@dataclass(slots=True)
class PolicyRepair:
    """``status``: ``clean`` (nothing breaks a rule), ``repaired``, ``unrepairable`` or
    ``timeout``. ``deleted`` are step positions; ``changed`` (position, argument, old, new)."""

    status: str
    deleted: list[int] = field(default_factory=list)
    changed: list[tuple[int, str, Any, Any]] = field(default_factory=list)
    document: list[dict[str, Any]] | None = None

    @property
    def cost(self) -> int:
        return len(self.deleted) + len(self.changed)


class _Repair:
    """The constraints, built under ``deadline``: building them is Python, which Z3's time
    limit does not reach (a windowed ``at most`` over a 240-step plan took 6 s to build).

    Each repair has a Z3 context of its own: in the shared one, the optimiser breaks ties
    between repairs of equal cost by what the process solved before (2 of 300 repairs of real
    completions under random policies came out different when solved in another order)."""

    def __init__(self, calls: list[PolicyCall], policies: PolicySet, deadline: Deadline) -> None:
        self.calls = calls
        self.policies = policies
        self.deadline = deadline
        ctx = self.ctx = z3.Context()
        self.false = z3.BoolVal(False, ctx)
        self.keep = [z3.Bool(f"keep_{i}", ctx) for i in range(len(calls))]
        self.opt = z3.Optimize(ctx=ctx)
        self.values: dict[tuple[int, str], tuple[Any, Any]] = {}  # (step, arg) -> (var, old)
        if calls:
            self.opt.add(z3.Or(self.keep))
        for call in calls:
            self.opt.add_soft(self.keep[call.index], DELETE_WEIGHT)
            for flow in call.flows:  # a kept step never reads a deleted one
                self.opt.add(z3.Implies(self.keep[call.index], self.keep[flow.source]))

    def matches(self, matcher: Matcher) -> list[bool]:
        return [matcher(call.tool) for call in self.calls]

    def kept_before(self, flags: list[bool]) -> list[Any]:
        out, so_far = [], self.false
        for i, flag in enumerate(flags):
            self.deadline.check()
            out.append(so_far)
            if flag:
                so_far = z3.Or(so_far, self.keep[i])
        return out

    def value(self, call: PolicyCall, name: str, old: Any, predicate: CompiledPredicate
              ) -> Any:
        """The predicate on the (maybe changed) value of top-level argument ``name``."""
        op, bound = predicate.predicate.op, predicate.predicate.value
        numeric = is_number(old) and op != "matches"
        textual = isinstance(old, str) and op in ("==", "!=", "in", "not in")
        ctx = self.ctx
        if not (numeric or textual):
            return z3.BoolVal(predicate.holds(old), ctx)
        key = (call.index, name)
        if key not in self.values:
            var = (z3.Int(f"v{key}", ctx) if isinstance(old, int) else z3.Real(f"v{key}", ctx)) \
                if numeric else z3.String(f"v{key}", ctx)
            const = z3.IntVal(old, ctx) if isinstance(old, int) and numeric else \
                z3.RealVal(old, ctx) if numeric else z3.StringVal(old, ctx)
            self.opt.add_soft(var == const, 1)
            self.values[key] = (var, old)
        var, _ = self.values[key]
        return numeric_holds(var, op, bound) if numeric else string_holds(var, op, bound)

    def rule(self, rule: Rule, complete: bool) -> None:
        toolset = self.policies.toolset
        keep = self.keep
        if rule.kind in (REQUIRE_BEFORE, FORBID_AFTER, REQUIRE_CALL, AT_MOST):
            assert rule.first is not None
            first = self.matches(Matcher(rule.first, toolset))
        if rule.kind == REQUIRE_BEFORE:
            assert rule.second is not None
            second = self.matches(Matcher(rule.second, toolset))
            before = self.kept_before(first)
            for i, flag in enumerate(second):
                if flag:
                    self.opt.add(z3.Implies(keep[i], before[i]))
        elif rule.kind == FORBID_AFTER:
            assert rule.second is not None
            second = self.matches(Matcher(rule.second, toolset))
            before = self.kept_before(second)
            for i, flag in enumerate(first):
                if flag:
                    self.opt.add(z3.Not(z3.And(keep[i], before[i])))
        elif rule.kind == REQUIRE_CALL:
            if complete:
                self.opt.add(z3.Or([keep[i] for i, f in enumerate(first) if f]
                                   or [self.false]))
        elif rule.kind == AT_MOST:
            self._count(rule, first)
        elif rule.kind == ARGUMENT:
            self._argument(rule)
        elif rule.kind == FLOW:
            self._flow(rule)

    def _count(self, rule: Rule, counted: list[bool]) -> None:
        keep, deadline = self.keep, self.deadline
        position = []
        for i in range(len(keep)):
            deadline.check()
            position.append(z3.Sum([z3.If(k, 1, 0) for k in keep[:i]]) if i
                            else z3.IntVal(0, self.ctx))
        for i, flag in enumerate(counted):
            if not flag:
                continue
            deadline.check()
            earlier = [z3.If(z3.And(keep[j], position[i] - position[j] < rule.window)
                             if rule.window is not None else keep[j], 1, 0)
                       for j in range(i) if counted[j]]
            if earlier:
                self.opt.add(z3.Implies(keep[i], z3.Sum(earlier) < rule.count))
            elif rule.count <= 0:
                self.opt.add(z3.Not(keep[i]))

    def _argument(self, rule: Rule) -> None:
        assert rule.target is not None and rule.predicate is not None
        toolset = self.policies.toolset
        called = Matcher(rule.target.tool, toolset)
        predicate = CompiledPredicate.of(rule.predicate)
        excused = self.kept_before(self.matches(Matcher(rule.unless, toolset))) \
            if rule.unless is not None else None
        path = rule.target.path
        for call in self.calls:
            self.deadline.check()
            if not called(call.tool) or (path and str(path[0]) in call.unknown):
                continue
            old = lookup(call.arguments, path)
            if old is MISSING:
                continue
            if len(path) == 1:
                holds = self.value(call, str(path[0]), old, predicate)
            else:
                holds = z3.BoolVal(predicate.holds(old), self.ctx)
            broken = holds if rule.forbid else z3.Not(holds)
            parts = [self.keep[call.index], broken]
            if excused is not None:
                parts.append(z3.Not(excused[call.index]))
            self.opt.add(z3.Not(z3.And(parts)))

    def _flow(self, rule: Rule) -> None:
        assert rule.source is not None and rule.target is not None
        toolset = self.policies.toolset
        source, target = rule.source, rule.target
        from_tool, to_tool = Matcher(source.tool, toolset), Matcher(target.tool, toolset)
        tainted: list[Any] = []
        for call in self.calls:
            self.deadline.check()
            reaching = []
            for flow in call.flows:
                direct = z3.BoolVal(from_tool(self.calls[flow.source].tool)
                                    and path_overlaps(flow.source_path, source.path), self.ctx)
                reached = z3.And(self.keep[flow.source], z3.Or(direct, tainted[flow.source]))
                reaching.append(reached)
                if to_tool(call.tool) and path_overlaps(flow.argument, target.path):
                    self.opt.add(z3.Not(z3.And(self.keep[call.index], reached)))
            tainted.append(z3.And(self.keep[call.index], z3.Or(reaching or [self.false])))


def repair_policies(plan: Plan, document: list[dict[str, Any]], policies: PolicySet, *,
                    complete: bool = True, timeout_ms: int = DEFAULT_TIMEOUT_MS
                    ) -> PolicyRepair:
    """The fewest deletions and value changes after which ``plan`` (whose H.3 JSON is
    ``document``) keeps every rule of ``policies``; the repaired document is renumbered."""
    calls = plan_calls(plan)
    deadline = Deadline(timeout_ms)
    try:
        repair = _Repair(calls, policies, deadline)
        for rule in policies.rules:
            repair.rule(rule, complete)
        for var, old in repair.values.values():  # then: numbers as close to the old ones
            if not isinstance(old, str):
                distance = var - old
                repair.opt.minimize(z3.If(distance >= 0, distance, -distance))
        repair.opt.set("timeout", deadline.remaining_ms())  # what building them left
    except SolverTimeout:
        return PolicyRepair("timeout")
    answer = repair.opt.check()
    if answer == z3.unknown:
        return PolicyRepair("timeout")
    if answer == z3.unsat:
        return PolicyRepair("unrepairable")
    model = repair.opt.model()
    deleted = [i for i, k in enumerate(repair.keep)
               if not z3.is_true(model.eval(k, model_completion=True))]
    changed = []
    for (position, name), (var, old) in sorted(repair.values.items()):
        if position in deleted:
            continue
        new = _python(model.eval(var, model_completion=True), old)
        if new != old:
            changed.append((position, name, old, new))
    if not deleted and not changed:
        return PolicyRepair("clean", document=document)
    return PolicyRepair("repaired", deleted, changed, _rewrite(document, deleted, changed))


def _python(value: Any, old: Any) -> Any:
    if isinstance(old, str):
        return value.as_string()
    if isinstance(old, int):
        return value.as_long()
    fraction = value.as_fraction()
    return float(fraction)


def _rewrite(document: list[dict[str, Any]], deleted: list[int],
             changed: list[tuple[int, str, Any, Any]]) -> list[dict[str, Any]]:
    """The plan without the deleted steps, renumbered 0, 1, ..., references re-targeted."""
    steps = copy.deepcopy(document)
    for position, name, _, new in changed:
        inputs = steps[position].get("inputs")
        if isinstance(inputs, dict):
            inputs[name] = new
    numbers: dict[int, int] = {}
    kept: list[dict[str, Any]] = []
    for position, step in enumerate(steps):
        if position in deleted:
            continue
        if isinstance(step.get("step"), int):
            numbers[step["step"]] = len(kept)
        step["step"] = len(kept)
        kept.append(step)
    for step in kept:
        inputs = step.get("inputs")
        if isinstance(inputs, dict):
            for key, value in inputs.items():
                inputs[key] = _retarget(value, numbers)
        dependence = step.get("dependence")
        if isinstance(dependence, list):
            step["dependence"] = [numbers.get(d, d) if isinstance(d, int) else d
                                  for d in dependence]
        content = step.get("dependence_content")
        if isinstance(content, dict):
            step["dependence_content"] = {
                str(numbers.get(int(k), k)) if re.fullmatch(r"\d+", k) else k: v
                for k, v in content.items()}
    return kept


def _retarget(value: Any, numbers: dict[int, int]) -> Any:
    if isinstance(value, str):
        match = REFERENCE_RE.match(value)
        if match and int(match[1]) in numbers:
            return format_reference(numbers[int(match[1])], match[2])
    return value

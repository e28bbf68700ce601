"""Contradictions between policy rules, found and explained by Z3 (``PC813``).

Each rule becomes a tracked constraint over an abstraction of every plan, and a minimal
unsatisfiable set of them is a contradiction no plan can get round:

* per argument path of one tool (rules without ``unless``): a variable for the value; each
  rule says the predicate holds (``forbid``: does not). No value satisfying all of them means
  the tool can never be called with that argument;
* per pattern: whether a plan calls it (``occurs``) and the position of its first call.
  ``require A`` says ``occurs(A)``; ``at most 0 A``: not ``occurs(A)``; ``require A before B``:
  ``occurs(B)`` implies ``occurs(A)`` and ``first(A) < first(B)``; ``forbid B after A``:
  ``occurs(A)`` and ``occurs(B)`` imply ``first(B) < first(A)``.

Patterns written differently are different variables: a relaxation, so a contradiction found
is real, though one between overlapping globs may be missed.
"""

from __future__ import annotations

from typing import Any

import z3

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    FORBID_AFTER,
    REQUIRE_BEFORE,
    REQUIRE_CALL,
    Rule,
    ToolPattern,
)
from plancheck.ir.nodes import Toolset
from plancheck.policy.loader import PolicyError, PolicySet, load_policies
from plancheck.policy.semantics import is_number
from plancheck.smt.limits import DEFAULT_TIMEOUT_MS


def usable_policies(spec: Any, toolset: Toolset, *, timeout_ms: int = DEFAULT_TIMEOUT_MS
                    ) -> PolicySet:
    """The policies of ``spec`` (a path, DSL text or a loaded set) checked against ``toolset``
    and for contradictions: what the command line and the API decide plans against. Raises
    :class:`PolicyError` with the diagnostics (positions in the policy file) when they cannot
    be used."""
    policies = load_policies(spec, toolset)
    found = contradictions(policies, timeout_ms=timeout_ms)
    if found:
        raise PolicyError(found, policies.text, policies.name)
    return policies


def contradictions(policies: PolicySet, *, timeout_ms: int = DEFAULT_TIMEOUT_MS
                   ) -> list[Diagnostic]:
    """A PC813 per minimal set of rules no plan satisfies together (empty: none found)."""
    found: list[Diagnostic] = []
    groups: dict[tuple[str, str, str], list[Rule]] = {}
    for rule in policies.rules:
        if rule.kind == ARGUMENT and rule.unless is None and rule.target is not None:
            key = (rule.target.tool.kind, rule.target.tool.text,
                   ".".join(str(k) for k in rule.target.path))
            groups.setdefault(key, []).append(rule)
    for rules in groups.values():
        if len(rules) > 1:
            found.extend(_unsat_sets(rules, _value_constraints(rules), timeout_ms,
                                     f"no value of `{rules[0].target}` satisfies"))
    ordering = [r for r in policies.rules
                if r.kind in (REQUIRE_CALL, REQUIRE_BEFORE, FORBID_AFTER)
                or (r.kind == AT_MOST and r.count == 0)]
    if ordering:
        found.extend(_unsat_sets(ordering, _order_constraints(ordering), timeout_ms,
                                 "no plan satisfies"))
    return found


def _unsat_sets(rules: list[Rule], constraints: list[Any] | None, timeout_ms: int,
                what: str) -> list[Diagnostic]:
    if constraints is None:
        return []
    solver = z3.Solver()
    solver.set("timeout", max(timeout_ms, 1))
    solver.set("unsat_core", True)
    literals = []
    for n, constraint in enumerate(constraints):
        literal = z3.Bool(f"rule_{n}")
        solver.add(z3.Implies(literal, constraint))
        literals.append(literal)
    if solver.check(*literals) != z3.unsat:
        return []  # satisfiable, or undecided within the limit: no contradiction shown
    names = {str(literal): n for n, literal in enumerate(literals)}
    core = [names[str(c)] for c in solver.unsat_core()]
    for member in list(core):  # a minimal set: every rule in it is needed
        rest = [n for n in core if n != member]
        if solver.check(*[literals[n] for n in rest]) == z3.unsat:
            core = rest
    members = [rules[n] for n in sorted(core)]
    first, *others = members
    listed = ", ".join(f"`{r.body()}`" for r in members)
    return [make("PC813", f"{what} {listed} together", primary=first.span,
                 label="contradicts", secondary=[(r.span, "with this rule") for r in others],
                 data={"rules": [r.body() for r in members]})]


def _value_constraints(rules: list[Rule]) -> list[Any] | None:
    """One constraint per rule over one variable, or None when the predicates mix kinds of
    values (or use regular expressions) that one variable cannot stand for."""
    bounds: list[object] = []
    for rule in rules:
        assert rule.predicate is not None
        value = rule.predicate.value
        bounds.extend(value if isinstance(value, list) else [value])
        if rule.predicate.op == "matches":
            return None
    if all(is_number(b) for b in bounds):
        var, const = z3.Real("value"), z3.RealVal
    elif all(isinstance(b, str) for b in bounds):
        var, const = z3.String("value"), z3.StringVal
    else:
        return None
    constraints = []
    for rule in rules:
        assert rule.predicate is not None
        op, bound = rule.predicate.op, rule.predicate.value
        if op in ("in", "not in"):
            assert isinstance(bound, list)
            holds = z3.Or([var == const(b) for b in bound]) if bound else z3.BoolVal(False)
            holds = holds if op == "in" else z3.Not(holds)
        else:
            other = const(bound)
            holds = {"<": var < other, "<=": var <= other, ">": var > other,
                     ">=": var >= other, "==": var == other, "!=": var != other}[op] \
                if is_number(bound) or op in ("==", "!=") else z3.BoolVal(False)
        constraints.append(z3.Not(holds) if rule.forbid else holds)
    return constraints


def _order_constraints(rules: list[Rule]) -> list[Any]:
    occurs: dict[tuple[str, str], Any] = {}
    first: dict[tuple[str, str], Any] = {}

    def of(pattern: ToolPattern | None) -> tuple[Any, Any]:
        assert pattern is not None
        key = (pattern.kind, pattern.text)
        if key not in occurs:
            occurs[key] = z3.Bool(f"occurs {pattern}")
            first[key] = z3.Int(f"first {pattern}")
        return occurs[key], first[key]

    constraints = []
    for rule in rules:
        if rule.kind == REQUIRE_CALL:
            constraints.append(of(rule.first)[0])
        elif rule.kind == AT_MOST:
            constraints.append(z3.Not(of(rule.first)[0]))
        elif rule.kind == REQUIRE_BEFORE:
            (needed, needed_at), (guarded, guarded_at) = of(rule.first), of(rule.second)
            constraints.append(z3.Implies(guarded, z3.And(needed, needed_at < guarded_at)))
        else:
            (banned, banned_at), (trigger, trigger_at) = of(rule.first), of(rule.second)
            constraints.append(z3.Implies(z3.And(banned, trigger), banned_at < trigger_at))
    return constraints

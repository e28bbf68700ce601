"""The static policy check: Z3 decides every rule on a whole plan (or a prefix of one) and
explains each violation by a minimal set of the plan's facts.

The encoding
------------
What the plan says becomes tracked facts, each a Boolean that implies its meaning: "step ``i``
calls tool ``t``" (an integer variable per step equals ``t``'s number), "argument ``p`` of step
``i`` is ``v``" (a real or string variable equals ``v``; a regular expression's verdict on it),
"argument ``q`` of step ``i`` reads the result of step ``k``" (a flow edge). A rule's
violation at step ``i`` is a formula over those variables, the one
:mod:`plancheck.policy.semantics` defines (patterns and regular expressions are read with its
matchers):

* ``require A before B``: ``B(i) and not (A(0) or ... or A(i-1))``;
* ``forbid A after B``: ``A(i) and (B(0) or ... or B(i-1))``;
* ``at most N A [per W calls]``: ``A(i) and count(A, window before i) >= N``;
* an argument predicate: ``T(i) and not excused(i) and not P(v_i)`` (``forbid``: ``P(v_i)``);
* a flow: ``B(i) and reach(source of an edge into the argument)``, where ``reach(k)`` is
  ``A(k)`` or an edge into ``k`` from a reached step (taint passes through calls);
* ``require A`` on a complete plan: ``not (A(0) or ... or A(n-1))``.

A rule holds when the facts and the disjunction of its violations are unsatisfiable. Each
violation the model shows is then explained: the facts together with its negation are
unsatisfiable, and the unsat core, shrunk to a minimal one, is the set of steps and facts that
cause it (as ``check --explain`` explains dependency conflicts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    FLOW,
    FORBID_AFTER,
    REQUIRE_BEFORE,
    Rule,
    ToolPattern,
)
from plancheck.ir.nodes import Plan, Toolset
from plancheck.policy.loader import PolicySet
from plancheck.policy.plan_calls import plan_calls
from plancheck.policy.report import Fact, violation_diagnostic
from plancheck.policy.semantics import (
    CODE_OF_KIND,
    EXPLICIT,
    MISSING,
    CompiledPredicate,
    FlowIn,
    Matcher,
    PolicyCall,
    Violation,
    decide_trace,
    is_number,
    lookup,
    path_overlaps,
)
from plancheck.policy.trace import Trace
from plancheck.smt.limits import DEFAULT_TIMEOUT_MS, Deadline, SolverTimeout
from plancheck.smt.policy_terms import numeric_holds, string_holds

__all__ = ["DEFAULT_TIMEOUT_MS", "Explained", "PolicyOutcome", "PolicyPhase", "check_policies",
           "policy_diagnostics", "policy_phase"]


# Violations of one rule explained by a minimal set of facts; the rest are reported without
# one (a plan that breaks a count at every step needs the first few explained, not all).
MAX_EXPLAINED = 10
MAX_SHRUNK = 48  # cores larger than this are reported as Z3 gives them


@dataclass(slots=True)
class Explained:
    """A violation and the set of facts that cause it (``minimal``: shown to be minimal, none
    of them can go; False when the set is Z3's core as it came, or none was computed)."""

    violation: Violation
    facts: list[Fact]
    minimal: bool = True


@dataclass(slots=True)
class PolicyOutcome:
    explained: list[Explained] = field(default_factory=list)
    timed_out: bool = False


class _Encoding:
    """The trace's facts, shared by every rule; one formula per rule and position."""

    def __init__(self, calls: list[PolicyCall], policies: PolicySet,
                 deadline: Deadline | None = None) -> None:
        self.calls = calls
        self.deadline = deadline
        self.toolset = policies.toolset
        # The tools the trace calls and the pool's tools the rules name: a fact "step i calls
        # t" then says, in a core, that step i calls none of the tools a rule asks for.
        named = {name for rule in policies.rules for pattern in _patterns(rule)
                 for name in Matcher(pattern, self.toolset).in_pool(self.toolset)}
        self.names = sorted({call.tool for call in calls} | named)
        self.ids = {name: number for number, name in enumerate(self.names)}
        # A context of its own: in the shared one, which facts an explanation names depended
        # on what the process had solved before (1 of 300 real completions under seeded
        # random policies was explained otherwise when checked in the other order).
        ctx = self.ctx = z3.Context()
        self.false = z3.BoolVal(False, ctx)
        self.tool_vars = [z3.Int(f"tool_{i}", ctx) for i in range(len(calls))]
        self.facts: list[Fact] = []
        self.literals: list[Any] = []
        self.literal_ids: dict[int, int] = {}  # a literal's AST id -> its fact
        self.solver = z3.Solver(ctx=ctx)  # facts as assumptions: unsat cores explain violations
        # The facts as plain constraints: deciding a rule is then propagation, not a search
        # over which facts to assume (an order of magnitude faster on 100-step plans).
        self.decider = z3.Solver(ctx=ctx)
        for call, var in zip(calls, self.tool_vars, strict=True):
            self._fact(Fact("tool", call.index, call.tool), var == self.ids[call.tool])
        self._edges: dict[tuple[int, int], Any] = {}
        self._value_literals: dict[tuple[int, str], Any] = {}
        self._matches: dict[tuple[str, str, int], Any] = {}
        self._defined = 0

    def _fact(self, fact: Fact, meaning: Any) -> Any:
        if self.deadline is not None and len(self.facts) % 64 == 0:
            self.deadline.check()  # building terms in Python is not bounded by Z3's timeout
        literal = z3.Bool(f"fact_{len(self.facts)}", self.ctx)
        self.solver.add(z3.Implies(literal, meaning))
        self.decider.add(meaning)
        self.literal_ids[literal.get_id()] = len(self.facts)
        self.facts.append(fact)
        self.literals.append(literal)
        return literal

    # ---------------------------------------------------------------- building blocks

    def define(self, sort: Any, term: Any) -> Any:
        """A fresh constant equal to ``term``, by definition (a hard constraint of both
        solvers, never part of an explanation)."""
        constant = sort(f"def_{self._defined}", self.ctx)
        self._defined += 1
        self.solver.add(constant == term)
        self.decider.add(constant == term)
        return constant

    def calls_of(self, matcher: Matcher, position: int) -> Any:
        """Step ``position`` calls a tool the pattern names."""
        key = (matcher.pattern.kind, matcher.pattern.text, position)
        found = self._matches.get(key)
        if found is None:
            if self.deadline is not None and len(self._matches) % 256 == 0:
                self.deadline.check()
            ids = [self.ids[name] for name in self.names if matcher(name)]
            var = self.tool_vars[position]
            found = (var == ids[0] if len(ids) == 1 else z3.Or([var == n for n in ids])) \
                if ids else self.false
            self._matches[key] = found
        return found

    def edge(self, call: PolicyCall, flow: FlowIn) -> Any:
        key = (call.index, id(flow))
        literal = self._edges.get(key)
        if literal is None:
            edge = z3.Bool(f"edge_{call.index}_{len(self._edges)}", self.ctx)
            keys = ".".join(str(k) for k in flow.argument)
            kind = "flow" if flow.kind == EXPLICIT else flow.kind  # inferred: a copy
            self._fact(Fact(kind, call.index, keys, flow.source), edge)
            literal = self._edges[key] = edge
        return literal

    def value_holds(self, call: PolicyCall, rule: Rule, predicate: CompiledPredicate) -> Any:
        """The predicate on the argument's value, under the fact that says what it is; None
        when the call does not pass the argument or its value is not known."""
        assert rule.target is not None
        path = rule.target.path
        if path and str(path[0]) in call.unknown:
            return None
        value = lookup(call.arguments, path)
        if value is MISSING:
            return None
        keys = ".".join(str(k) for k in path)
        op, bound = predicate.predicate.op, predicate.predicate.value
        name = f"value_{call.index}_{keys}_{len(self.facts)}"
        if is_number(value) and op != "matches":
            var = z3.Real(name, self.ctx)
            self._fact(Fact("value", call.index, keys), var == z3.RealVal(value, self.ctx))
            return numeric_holds(var, op, bound)
        if isinstance(value, str) and op in ("==", "!=", "in", "not in"):
            var = z3.String(name, self.ctx)
            self._fact(Fact("value", call.index, keys), var == z3.StringVal(value, self.ctx))
            return string_holds(var, op, bound)
        # A regular expression, or values of other kinds: the semantics' verdict is the fact.
        var = z3.Bool(name, self.ctx)
        self._fact(Fact("value", call.index, keys), var == predicate.holds(value))
        return var


def _patterns(rule: Rule) -> list[ToolPattern]:
    paths = [p.tool for p in (rule.source, rule.target) if p is not None]
    return [p for p in (rule.first, rule.second, rule.unless, *paths) if p is not None]


# --------------------------------------------------------------------------- violations


CHAIN = 64  # a chained term is cut by a definition every this many links


def _prefix_any(encoding: _Encoding, parts: list[Any]) -> list[Any]:
    """``out[i]`` = ``parts[0] or ... or parts[i-1]``, each a defined constant (terms stay
    shallow: a chain nested a thousand deep overflows the stack of z3's Python API)."""
    out = [encoding.false]
    for n, part in enumerate(parts[:-1]):
        term = z3.Or(out[-1], part)
        out.append(encoding.define(z3.Bool, term) if n % CHAIN == CHAIN - 1 else term)
    return out


def _violations(rule: Rule, encoding: _Encoding, complete: bool) -> list[tuple[int, Any]]:
    """(position, formula) of every way ``rule`` can be broken (position -1: the whole
    trace)."""
    calls = encoding.calls
    positions = range(len(calls))
    if rule.kind in (REQUIRE_BEFORE, FORBID_AFTER):
        assert rule.first is not None and rule.second is not None
        first, second = Matcher(rule.first, encoding.toolset), Matcher(rule.second,
                                                                        encoding.toolset)
        if rule.kind == REQUIRE_BEFORE:
            before = _prefix_any(encoding, [encoding.calls_of(first, i) for i in positions])
            return [(i, z3.And(encoding.calls_of(second, i), z3.Not(before[i])))
                    for i in positions if second(calls[i].tool)]
        before = _prefix_any(encoding, [encoding.calls_of(second, i) for i in positions])
        return [(i, z3.And(encoding.calls_of(first, i), before[i]))
                for i in positions if first(calls[i].tool)]
    if rule.kind == AT_MOST:
        return _count_violations(rule, encoding)
    if rule.kind == ARGUMENT:
        return _argument_violations(rule, encoding)
    if rule.kind == FLOW:
        return _flow_violations(rule, encoding)
    assert rule.first is not None
    if not complete:
        return []
    wanted = Matcher(rule.first, encoding.toolset)
    return [(-1, z3.Not(z3.Or([encoding.calls_of(wanted, i) for i in positions] or
                              [encoding.false])))]


def _count_violations(rule: Rule, encoding: _Encoding) -> list[tuple[int, Any]]:
    assert rule.first is not None
    counted = Matcher(rule.first, encoding.toolset)
    one, zero = z3.IntVal(1, encoding.ctx), z3.IntVal(0, encoding.ctx)
    # prefix[i]: how many of the steps before i call the pattern (shared terms: linear size).
    prefix = [zero]
    for i in range(len(encoding.calls)):
        if counted(encoding.calls[i].tool):
            term = prefix[-1] + z3.If(encoding.calls_of(counted, i), one, zero)
            prefix.append(encoding.define(z3.Int, term) if i % CHAIN == CHAIN - 1 else term)
        else:
            prefix.append(prefix[-1])
    found = []
    for i, call in enumerate(encoding.calls):
        if not counted(call.tool):
            continue
        start = 0 if rule.window is None else max(0, i - rule.window + 1)
        before = prefix[i] - prefix[start] if start else prefix[i]
        found.append((i, z3.And(encoding.calls_of(counted, i), before >= rule.count)))
    return found


def _argument_violations(rule: Rule, encoding: _Encoding) -> list[tuple[int, Any]]:
    assert rule.target is not None and rule.predicate is not None
    called = Matcher(rule.target.tool, encoding.toolset)
    predicate = CompiledPredicate.of(rule.predicate)
    excused_by = Matcher(rule.unless, encoding.toolset) if rule.unless is not None else None
    excused = _prefix_any(encoding, [encoding.calls_of(excused_by, i)
                           for i in range(len(encoding.calls))]) if excused_by else None
    found = []
    for i, call in enumerate(encoding.calls):
        if not called(call.tool):
            continue
        holds = encoding.value_holds(call, rule, predicate)
        if holds is None:
            continue
        broken = holds if rule.forbid else z3.Not(holds)
        parts = [encoding.calls_of(called, i), broken]
        if excused is not None:
            parts.append(z3.Not(excused[i]))
        found.append((i, z3.And(parts)))
    return found


def _flow_violations(rule: Rule, encoding: _Encoding) -> list[tuple[int, Any]]:
    assert rule.source is not None and rule.target is not None
    source, target = rule.source, rule.target
    from_tool = Matcher(source.tool, encoding.toolset)
    to_tool = Matcher(target.tool, encoding.toolset)
    calls = encoding.calls
    # tainted[k]: step k holds a value of a source call (None: no flow of the rule's source
    # can reach it, whatever the facts of other steps say: no term is built for it).
    tainted: list[Any] = []

    def reaches(flow: FlowIn) -> Any:
        direct = (encoding.calls_of(from_tool, flow.source)
                  if from_tool(calls[flow.source].tool)
                  and path_overlaps(flow.source_path, source.path) else None)
        earlier = tainted[flow.source]
        if direct is None or earlier is None:
            return direct if earlier is None else earlier
        return z3.Or(direct, earlier)

    found = []
    for call in calls:
        into = [(flow, reached) for flow in call.flows if 0 <= flow.source < call.index
                and (reached := reaches(flow)) is not None]
        hits = [z3.And(encoding.edge(call, flow), reached) for flow, reached in into]
        if to_tool(call.tool):
            aimed = [hit for (flow, _), hit in zip(into, hits, strict=True)
                     if path_overlaps(flow.argument, target.path)]
            if aimed:
                found.append((call.index, z3.And(encoding.calls_of(to_tool, call.index),
                                                 z3.Or(aimed))))
        tainted.append(encoding.define(z3.Bool, z3.Or(hits)) if hits else None)
    return found


# --------------------------------------------------------------------------- the check


def check_policies(calls: list[PolicyCall], policies: PolicySet, *, complete: bool = True,
                   timeout_ms: int = DEFAULT_TIMEOUT_MS) -> PolicyOutcome:
    """Every violation of ``policies`` by the trace ``calls``, each with a minimal set of facts
    that cause it; ``timed_out`` when the solver did not finish within ``timeout_ms`` (what
    was decided by then is kept)."""
    outcome = PolicyOutcome()
    deadline = Deadline(timeout_ms)
    try:
        encoding = _Encoding(calls, policies, deadline)
        for rule in policies.rules:
            deadline.check()
            semantic = {v.index: v for v in decide_trace([rule], encoding.toolset, calls,
                                                         complete=complete)}
            for n, (position, formula) in enumerate(_decide(rule, encoding, complete,
                                                            deadline)):
                violation = semantic.get(position) or _disagreement(rule, position)
                if n < MAX_EXPLAINED:
                    facts, minimal = _explain(position, formula, encoding, deadline)
                    outcome.explained.append(Explained(violation, facts, minimal))
                else:  # decided by Z3 like the others, but not explained: said so in data
                    outcome.explained.append(Explained(violation, [], minimal=False))
    except SolverTimeout:
        outcome.timed_out = True
    return outcome


def _decide(rule: Rule, encoding: _Encoding, complete: bool, deadline: Deadline
            ) -> list[tuple[int, Any]]:
    """The violations of ``rule`` Z3 finds: none when the facts and the disjunction of its
    violations are unsatisfiable."""
    candidates = _violations(rule, encoding, complete)
    if not candidates:
        return []
    solver = encoding.decider
    solver.set("timeout", deadline.remaining_ms())
    answer = solver.check(z3.Or([f for _, f in candidates]))
    if answer == z3.unknown:
        raise SolverTimeout
    if answer == z3.unsat:
        return []
    model = solver.model()
    return [(p, f) for p, f in candidates if z3.is_true(model.eval(f, model_completion=True))]


def _explain(position: int, formula: Any, encoding: _Encoding, deadline: Deadline
             ) -> tuple[list[Fact], bool]:
    """The facts of an unsat core of the facts and the violation's negation, shrunk to a
    minimal one when it is small (a large core, such as every step before a count's limit, is
    already what causes the violation; shrinking it would cost a check per member)."""
    solver = encoding.solver
    literals = encoding.literals
    solver.set("timeout", deadline.remaining_ms())
    if solver.check(*literals, z3.Not(formula)) != z3.unsat:
        raise SolverTimeout  # the facts fix every variable: only a timeout leaves it open
    index = encoding.literal_ids
    core = [index[c.get_id()] for c in solver.unsat_core() if c.get_id() in index]
    shrunk = len(core) <= MAX_SHRUNK
    if shrunk:
        for member in list(core):  # drop what is not needed
            rest = [n for n in core if n != member]
            solver.set("timeout", deadline.remaining_ms())
            if solver.check(*[literals[n] for n in rest], z3.Not(formula)) == z3.unsat:
                core = rest
    facts = sorted((encoding.facts[n] for n in core), key=lambda f: (f.position, f.kind))
    return facts, shrunk


def _disagreement(rule: Rule, position: int) -> Violation:
    """A violation Z3 found that the per-call semantics does not: said, never dropped (the
    equivalence tests hold that it does not happen)."""
    return Violation(rule, position, (), f"step {position} breaks `{rule.body()}` (the solver "
                     "found a violation the per-call semantics does not)", CODE_OF_KIND[rule.kind])


# --------------------------------------------------------------------------- as a check phase


def policy_diagnostics(plan: Plan, policies: PolicySet, *, complete: bool = True,
                       timeout_ms: int = DEFAULT_TIMEOUT_MS,
                       calls: list[PolicyCall] | None = None) -> list[Diagnostic]:
    """The diagnostics of ``plan`` against ``policies``: one per violation, and a PC814 when
    the solver ran out of time (a check past its budget never passes silently). ``calls``:
    the plan's steps as calls when they are known better than the plan says (a transcript's,
    named by their ids, with the flows inferred from its results)."""
    outcome = check_policies(plan_calls(plan) if calls is None else calls, policies,
                             complete=complete, timeout_ms=timeout_ms)
    found = [violation_diagnostic(e.violation, plan, policies.name, e.facts,
                                  minimal=e.minimal) for e in outcome.explained]
    if outcome.timed_out:
        found.append(make("PC814", f"the policy check did not finish within {timeout_ms} ms",
                          primary=plan.span, label="not shown to satisfy its policies",
                          help=["raise the limit with --timeout-ms"],
                          data={"timeout_ms": timeout_ms, "policy_file": policies.name}))
    return found


class PolicyPhase:
    """A check phase (``check_paths``' ``extra_phases``) deciding policies on each plan; on a
    transcript's trace (``on_trace``), with the flows provenance inferred from its results."""

    def __init__(self, policies: PolicySet, complete: bool, timeout_ms: int) -> None:
        self.policies = policies
        self.complete = complete
        self.timeout_ms = timeout_ms

    def __call__(self, plan: Plan, toolset: Toolset) -> list[Diagnostic]:
        return policy_diagnostics(plan, self.policies, complete=self.complete,
                                  timeout_ms=self.timeout_ms)

    def on_trace(self, plan: Plan, toolset: Toolset, trace: Trace) -> list[Diagnostic]:
        return policy_diagnostics(plan, self.policies, complete=self.complete,
                                  timeout_ms=self.timeout_ms, calls=trace.calls)


def policy_phase(policies: PolicySet, *, complete: bool = True,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS) -> PolicyPhase:
    """A check phase deciding ``policies`` on each plan."""
    return PolicyPhase(policies, complete, timeout_ms)

"""Z3 explanations of inconsistent plans, and the repair that goes with them.

Only ``check --explain``, ``fix``, ``synth`` and the solver planner import this module; the
plain check never does, so it never pays for z3.

The encoding
------------
Every step position ``q`` has a tool variable; every argument of a step has three: whether it
is a reference, the position of the step it reads, and the output key it reads. The schema's
rules are hard constraints over them:

* a reference reads an *earlier* step (acyclicity follows) and a key that step's tool produces;
* the produced type is compatible with the type the consuming tool expects (subtyping, and
  implicit conversions, which are only warnings) -- types are bit masks over the lattice, so
  one ``&`` decides compatibility;
* a step's predecessors are the steps its references read.

What the plan *says* becomes tracked facts, each a Boolean that implies its meaning: "argument
``a`` of step 2 reads ``k`` of step 1", "argument ``a`` is a literal", "step 2 declares
``dependence`` [-1]", "step 2 declares ``dependence_content`` null", "step 0 calls
``Precipitation_Nowcasting``", "a step reads at most one earlier step". A plan is consistent
when all its facts can hold together. When they cannot, every minimal unsatisfiable subset of
the facts (enumerated with MARCO: a map solver proposes subsets, unsat cores shrink them to
minimal ones) is one :data:`PC404` diagnostic with a label on each member: removing any one
member resolves that conflict. A solver that runs out of time yields ``PC405``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from plancheck.diagnostics.model import Diagnostic, Suggestion, make
from plancheck.diagnostics.span import Span
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import MalformedReference, Plan, Reference, Step, Toolset
from plancheck.records import replace
from plancheck.smt.edits import apply_edits
from plancheck.smt.limits import (
    DEFAULT_TIMEOUT_MS,
    Deadline,
    SolverTimeout,
    timeout_diagnostic,
    too_large_diagnostic,
)
from plancheck.smt.repair import (
    RepairAction,
    RepairResult,
    earlier_position,
    producer_positions,
    repair_plan,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "RepairAction",
    "RepairResult",
    "apply_edits",
    "attach_repair",
    "explain_conflicts",
    "repair_plan",
    "repair_suggestions",
]

MAX_CORES = 8
# (consumer input, earlier step, output key) triples the encoding would weigh: past this, the
# explanation is a PC405 at once (building that many constraints would outlast any time limit
# and its memory grows with them).
MAX_EXPLAIN_CANDIDATES = 100_000


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing the plan says, tracked so that it can appear in an unsat core."""

    kind: str  # reference | literal | dependence | content | tool | limit
    position: int  # the step it is about (-1 for the pool's predecessor limit)
    argument: str | None = None


# --------------------------------------------------------------------------- the encoding

OTHER = "\x00other"  # any output key the plan does not name


class _Encoding:
    """Facts and rules as propositional constraints over small finite domains.

    A step's tool is either the one it declares or, when that fact is dropped, "some other
    tool" (``top``): one that produces whatever is asked of it with whatever type is needed.
    So each fact of a core can be changed on its own, and a core reads as "these cannot all
    hold, whatever the rest of the plan is changed to".
    """

    def __init__(self, plan: Plan, toolset: Toolset, deadline: Deadline | None = None) -> None:
        self.plan = plan
        self.toolset = toolset
        self.deadline = deadline
        # A context of its own: in the shared one, which cores the enumeration found first
        # (and so which were reported under the limit) depended on what was solved before.
        self.ctx = z3.Context()
        self.by_number = producer_positions(plan)
        self.facts: list[Fact] = []
        self.meanings: list[Any] = []
        self.hard: list[Any] = []
        named: list[str] = []
        for step in plan.steps:
            for argument in step.args:
                if isinstance(argument.value, Reference) and argument.value.key not in named:
                    named.append(argument.value.key)
            for keys in (step.dependence_content or {}).values():
                named.extend(k for k in keys if k not in named)
        self.keys = [*named, OTHER]
        self.key_ids = {k: i for i, k in enumerate(self.keys)}

    @property
    def size(self) -> int:
        """The read candidates :meth:`build` weighs (quadratic in the steps)."""
        return sum(len(step.args) * step.position for step in self.plan.steps) * len(self.keys)

    def _tick(self) -> None:
        if self.deadline is not None:
            self.deadline.check()

    def _key(self, name: str) -> int:
        return self.key_ids.get(name, self.key_ids[OTHER])

    def _outputs(self, step: Step) -> dict[str, str | None]:
        """The keys a step's declared tool produces, with their types (None: unknown)."""
        tool = self.toolset.tool(step.tool or "")
        if tool is not None:
            return {o.name: o.type for o in tool.outputs}
        return dict.fromkeys(step.outputs or ())

    def _can_read(self, producer: Step, key: str, consumer: Step, argument: str) -> bool:
        """With both steps' declared tools: is ``key`` produced, and does it fit?"""
        made = self._outputs(producer)
        keys = [k for k in made if k not in self.key_ids] if key == OTHER else \
            ([key] if key in made else [])
        tool = self.toolset.tool(producer.tool or "")
        consumer_tool = self.toolset.tool(consumer.tool or "")
        param = consumer_tool.input(argument) if consumer_tool else None
        for name in keys:
            output = tool.output(name) if tool else None
            if output is None or param is None:
                return True
            if self.toolset.lattice.compat(output, param.type) is not Compat.INCOMPATIBLE:
                return True
        return False

    def build(self) -> _Encoding:
        steps = self.plan.steps
        self.top = [z3.Bool(f"top_{s.position}", self.ctx) for s in steps]
        self.uses: dict[tuple[int, int], Any] = {}
        self.bindings: dict[tuple[int, str], tuple[Any, Any, Any]] = {}
        last_key = len(self.keys) - 1
        for step in steps:
            self._tick()
            p = step.position
            if step.tool is None:
                self.hard.append(self.top[p])
            # Variables are named by the argument's index, not its name: Z3 takes names as
            # UTF-8, and a JSON key may hold a lone surrogate ("\udc80") that UTF-8 cannot.
            numbers: dict[str, int] = {}
            for argument in step.args:
                a = numbers.setdefault(argument.name, len(numbers))
                is_ref = z3.Bool(f"ref_{p}_{a}", self.ctx)
                source = z3.Int(f"src_{p}_{a}", self.ctx)
                key = z3.Int(f"key_{p}_{a}", self.ctx)
                self.bindings[(p, argument.name)] = (is_ref, source, key)
                if p == 0:
                    self.hard.append(z3.Not(is_ref))
                    continue
                self.hard.append(z3.Implies(is_ref, z3.And(
                    source >= 0, source < p, key >= 0, key <= last_key)))
                for q in range(p):
                    self._tick()
                    producer = steps[q]
                    for k, name in enumerate(self.keys):
                        if self._can_read(producer, name, step, argument.name):
                            continue
                        # Only another tool at either end makes this read possible.
                        self.hard.append(z3.Implies(
                            z3.And(is_ref, source == q, key == k),
                            z3.Or(self.top[q], self.top[p])
                            if name in self._outputs(producer) or name == OTHER
                            else self.top[q]))
            for q in range(p):
                self.uses[(p, q)] = z3.Or(*[
                    z3.And(self.bindings[(p, a.name)][0], self.bindings[(p, a.name)][1] == q)
                    for a in step.args]) if step.args else z3.BoolVal(False, self.ctx)
        for step in steps:
            self._tick()
            self._step_facts(step)
        limit = self.toolset.max_predecessors
        if limit is not None and self.uses:
            bounds = [z3.Sum([z3.If(self.uses[(s.position, q)], 1, 0)
                              for q in range(s.position)]) <= limit
                      for s in steps if s.position > 0]
            self._fact(Fact("limit", -1), _all(bounds, self.ctx))
        return self

    def _fact(self, fact: Fact, meaning: Any) -> None:
        self.facts.append(fact)
        self.meanings.append(meaning)

    def _step_facts(self, step: Step) -> None:
        p = step.position
        if step.tool is not None:
            self._fact(Fact("tool", p), z3.Not(self.top[p]))
        for argument in step.args:
            is_ref, source, key = self.bindings[(p, argument.name)]
            value = argument.value
            if isinstance(value, Reference):
                target = self._target(value.step, p)
                self._fact(Fact("reference", p, argument.name),
                           z3.And(is_ref, source == target, key == self._key(value.key)))
            elif isinstance(value, MalformedReference):
                if value.step is not None:
                    self._fact(Fact("reference", p, argument.name),
                               z3.And(is_ref, source == self._target(value.step, p)))
            elif step.declares_dependence:
                self._fact(Fact("literal", p, argument.name), z3.Not(is_ref))
        if not step.declares_dependence:
            return
        if step.dependence is not None:
            wanted = {earlier_position(self.by_number, n, p) for n in step.dependence if n != -1}
            terms = [u if q in wanted else z3.Not(u)
                     for (c, q), u in self.uses.items() if c == p]
            # As the plain check reads the field: [-1] alone, or the steps used, never both.
            numbers = set(step.dependence)
            if None in wanted or not numbers or (-1 in numbers and len(numbers) > 1):
                terms.append(z3.BoolVal(False, self.ctx))
            self._fact(Fact("dependence", p), _all(terms, self.ctx))
        self._fact(Fact("content", p), self._content_meaning(step))

    def _target(self, number: int, consumer: int) -> int:
        """The position a step number means from ``consumer``: an earlier step if there is one,
        else the (later) step with that number, else -1 (no such step)."""
        earlier = earlier_position(self.by_number, number, consumer)
        if earlier is not None:
            return earlier
        later = self.by_number.get(number)
        return later[0] if later else -1

    def _content_meaning(self, step: Step) -> Any:
        p = step.position
        declared: dict[int, tuple[str, ...]] = {}
        # ``{}`` is never right: no dependencies are written null.
        terms: list[Any] = [z3.BoolVal(False, self.ctx)] if step.dependence_content == {} else []
        for number, keys in (step.dependence_content or {}).items():
            q = earlier_position(self.by_number, number, p)
            if q is None:
                terms.append(z3.BoolVal(False, self.ctx))
                continue
            declared[q] = tuple(keys)
        refs = [self.bindings[(p, a.name)] for a in step.args]
        for is_ref, source, key in refs:
            for q in range(p):
                allowed = [key == self._key(k) for k in declared.get(q, ())]
                terms.append(z3.Implies(z3.And(is_ref, source == q), _any(allowed, self.ctx)))
        for q, keys in declared.items():
            for k in keys:
                terms.append(_any([z3.And(r, s == q, kk == self._key(k)) for r, s, kk in refs],
                                  self.ctx))
        return _all(terms, self.ctx)


def _all(terms: list[Any], ctx: z3.Context) -> Any:
    """``And`` of ``terms`` in ``ctx`` (z3's ``And()`` of nothing lands in the shared one)."""
    return z3.And(*terms) if terms else z3.BoolVal(True, ctx)


def _any(terms: list[Any], ctx: z3.Context) -> Any:
    return z3.Or(*terms) if terms else z3.BoolVal(False, ctx)


# --------------------------------------------------------------------------- MARCO


class _Cores:
    """Enumerates minimal unsatisfiable subsets of the facts."""

    def __init__(self, encoding: _Encoding, deadline: Deadline) -> None:
        self.deadline = deadline
        self.ctx = encoding.ctx
        self.solver = z3.Solver(ctx=self.ctx)
        # In slices, checking the time between them: adding tens of thousands of constraints
        # takes seconds of its own, which no solver timeout covers.
        for first in range(0, len(encoding.hard), 2000):
            deadline.check()
            self.solver.add(*encoding.hard[first:first + 2000])
        self.flags = [z3.Bool(f"fact_{i}", self.ctx) for i in range(len(encoding.facts))]
        for i, (flag, meaning) in enumerate(zip(self.flags, encoding.meanings, strict=True)):
            if i % 200 == 0:
                deadline.check()
            self.solver.add(z3.Implies(flag, meaning))
        self.index = {str(flag): i for i, flag in enumerate(self.flags)}

    def satisfiable(self, subset: Iterable[int]) -> tuple[bool, list[int]]:
        self.solver.set("timeout", self.deadline.remaining_ms())
        answer = self.solver.check(*[self.flags[i] for i in subset])
        if answer == z3.unknown:
            raise SolverTimeout
        if answer == z3.sat:
            return True, []
        return False, sorted(self.index[str(c)] for c in self.solver.unsat_core())

    def shrink(self, core: list[int]) -> list[int]:
        current = list(core)
        for i in list(current):
            if i not in current:
                continue
            trial = [j for j in current if j != i]
            sat, smaller = self.satisfiable(trial)
            if not sat:
                current = smaller
        return current

    def grow(self, seed: list[int]) -> list[int]:
        current = list(seed)
        for i in range(len(self.flags)):
            if i not in current and self.satisfiable([*current, i])[0]:
                current.append(i)
        return current

    def enumerate(self, limit: int) -> list[list[int]]:
        everything = list(range(len(self.flags)))
        sat, core = self.satisfiable(everything)
        if sat:
            return []
        found: list[list[int]] = []
        seeds = z3.Solver(ctx=self.ctx)
        marks = [z3.Bool(f"map_{i}", self.ctx) for i in everything]
        while len(found) < limit:
            seeds.set("timeout", self.deadline.remaining_ms())
            answer = seeds.check()
            if answer == z3.unknown:
                raise SolverTimeout
            if answer == z3.unsat:
                break
            model = seeds.model()
            seed = [i for i in everything if not z3.is_false(model.eval(marks[i]))]
            sat, core = self.satisfiable(seed)
            if sat:
                grown = self.grow(seed)
                seeds.add(_any([marks[i] for i in everything if i not in grown], self.ctx))
            else:
                minimal = self.shrink(core)
                found.append(minimal)
                seeds.add(_any([z3.Not(marks[i]) for i in minimal], self.ctx))
        return found


# --------------------------------------------------------------------------- diagnostics


def explain_conflicts(plan: Plan, toolset: Toolset, *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                      max_cores: int = MAX_CORES, with_repair: bool = True) -> list[Diagnostic]:
    """One ``PC404`` per minimal set of conflicting facts (empty when the plan is consistent);
    ``PC405`` when the solver runs out of time. The first ``PC404`` carries the minimum-edit
    repair of the whole plan as a suggestion."""
    if [s.position for s in plan.steps] != list(range(len(plan.steps))):
        # Some steps could not be read (e.g. a string where a step object belongs): the
        # encoding indexes steps by position, and those errors are reported already.
        return []
    deadline = Deadline(timeout_ms)
    encoding = _Encoding(plan, toolset, deadline)
    if encoding.size > MAX_EXPLAIN_CANDIDATES:
        return [too_large_diagnostic(plan, "explanation", encoding.size, MAX_EXPLAIN_CANDIDATES)]
    try:
        encoding.build()
        cores = _Cores(encoding, deadline).enumerate(max_cores)
    except SolverTimeout:
        return [timeout_diagnostic(plan, "explanation", timeout_ms)]
    facts = encoding.facts
    ordered = sorted(
        ([facts[i] for i in core] for core in cores),
        key=lambda members: (_consumer(members), [_order(f) for f in members]),
    )
    diagnostics = [_describe(members, plan, toolset) for members in ordered[:max_cores]]
    if diagnostics and with_repair:
        left = max(int((deadline.end - _now()) * 1000), 0)
        result = repair_plan(plan, toolset, timeout_ms=left)
        diagnostics = _attach_to_conflicts(diagnostics, result, plan)
    return diagnostics


def _now() -> float:
    import time

    return time.monotonic()


def _consumer(members: Sequence[Fact]) -> int:
    positions = [f.position for f in members if f.kind in ("reference", "literal", "dependence",
                                                           "content")]
    return max(positions) if positions else max(f.position for f in members)


def _order(fact: Fact) -> tuple[int, int, str]:
    kinds = ("reference", "literal", "dependence", "content", "tool", "limit")
    return (kinds.index(fact.kind), fact.position, fact.argument or "")


def _step_number(plan: Plan, position: int) -> str:
    step = plan.steps[position]
    return str(step.index) if step.index is not None else f"at position {position}"


def _describe(members: list[Fact], plan: Plan, toolset: Toolset) -> Diagnostic:
    members = sorted(members, key=_order)
    consumer_position = _consumer(members)
    consumer = plan.steps[consumer_position]
    number = _step_number(plan, consumer_position)
    labels: list[tuple[Span, str]] = []
    names: list[str] = []
    notes: list[str] = []
    referenced_args = [f.argument for f in members if f.kind == "reference" and f.argument]
    for fact in members:
        span, text, short = _member(fact, members, plan, toolset, referenced_args, notes)
        labels.append((span, text))
        names.append(short)
    primary, label = labels[0]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    verb = "cannot hold" if len(names) == 1 else "cannot all hold"
    return make(
        "PC404",
        f"dependency conflict in step {number}: {listed} {verb}",
        primary=primary,
        label=label,
        secondary=labels[1:],
        notes=notes,
        help=["changing any one of the labelled facts resolves this conflict"
              if len(members) > 1 else "change the labelled fact"],
        data={
            "step": consumer.index,
            "position": consumer_position,
            "core": [{"kind": f.kind, "position": f.position, "step": _index(plan, f.position),
                      "argument": f.argument} for f in members],
        },
    )


def _index(plan: Plan, position: int) -> int | None:
    return plan.steps[position].index if position >= 0 else None


def _member(fact: Fact, members: list[Fact], plan: Plan, toolset: Toolset,
            referenced_args: list[str], notes: list[str]) -> tuple[Span, str, str]:
    """The span, label and short name of one member of a core."""
    if fact.kind == "limit":
        step = plan.steps[_consumer(members)]
        limit = toolset.max_predecessors
        plural = "" if limit == 1 else "s"
        return (step.dependence_span if step.declares_dependence else step.tool_span,
                f"the pool allows {limit} predecessor{plural} per step",
                "the predecessor limit")
    step = plan.steps[fact.position]
    argument = step.arg(fact.argument) if fact.argument else None
    if fact.kind == "reference" and argument is not None:
        value = argument.value
        if isinstance(value, Reference):
            produced = _produced_type(plan, toolset, value, fact.position)
            what = f"`{value.key}`" + (f" (`{produced}`)" if produced else "")
            return (value.span, f"reads {what} of step {value.step}",
                    f"the reference in `{fact.argument}`")
        return (argument.value.span, "reads a result of step "
                f"{getattr(value, 'step', '?')}", f"the reference in `{fact.argument}`")
    if fact.kind == "literal" and argument is not None:
        return (argument.value.span, "a literal: reads no earlier result",
                f"the literal `{fact.argument}`")
    if fact.kind == "dependence":
        shown = list(step.dependence) if step.dependence is not None else None
        return (step.dependence_span, f"declares dependence {shown}", "`dependence`")
    if fact.kind == "content":
        declared = None if step.dependence_content is None else {
            str(k): list(v) for k, v in step.dependence_content.items()}
        return (step.dependence_content_span,
                f"declares dependence_content {_json(declared)}", "`dependence_content`")
    # A tool fact: what the consuming step's tool expects, or what a producer's tool makes.
    tool = toolset.tool(step.tool or "")
    short = f"the tool `{step.tool}` of step {_step_number(plan, fact.position)}"
    if tool is None:
        outputs = ", ".join(f"`{k}`" for k in step.outputs or ()) or "nothing"
        return (step.tool_span, f"`{step.tool}` is not in the pool; the step lists {outputs}",
                short)
    if fact.position == _consumer(members):
        consuming = [a for a in referenced_args if step.arg(a) is not None] or \
            [a.name for a in step.args]
        wants = ", ".join(f"`{a}`: `{p.type}`" for a in consuming
                          for p in [tool.input(a)] if p is not None)
        text = f"`{tool.name}` expects {wants}" if wants else \
            f"`{tool.name}` takes none of {', '.join(f'`{a}`' for a in consuming)}"
    else:
        made = ", ".join(f"`{o.name}`: `{o.type}`" for o in tool.outputs)
        text = f"step {_step_number(plan, fact.position)} calls `{tool.name}`, which produces " \
            f"{made}"
    return step.tool_span, text, short


def _produced_type(plan: Plan, toolset: Toolset, ref: Reference, consumer: int) -> str | None:
    position = earlier_position(producer_positions(plan), ref.step, consumer)
    if position is None:
        return None
    tool = toolset.tool(plan.steps[position].tool or "")
    output = tool.output(ref.key) if tool else None
    return output.type if output else None


def _json(value: object) -> str:
    import json

    return json.dumps(value)


# --------------------------------------------------------------------------- repairs as fixes


def _suggestion(result: RepairResult) -> Suggestion:
    applicability = "has-placeholders" if result.placeholders else "machine-applicable"
    changes = len(result.actions)
    return Suggestion(
        f"apply the minimum-edit repair ({changes} change{'s' if changes != 1 else ''}, "
        f"cost {result.cost}; `plancheck fix` writes it)",
        result.edits, applicability)


def _attach_to_conflicts(diagnostics: list[Diagnostic], result: RepairResult, plan: Plan
                         ) -> list[Diagnostic]:
    if not result.ok or not result.actions:
        extra = list(result.diagnostics) if result.status == "timeout" else []
        return diagnostics + extra
    attached = []
    shown: set[int] = set()
    for number, diagnostic in enumerate(diagnostics):
        position = diagnostic.data.get("position")
        lines = []
        for i, action in enumerate(result.actions):
            if action.position == position and i not in shown:
                shown.add(i)
                lines.append(f"repair: {action.message}")
        suggestions = (_suggestion(result),) if number == 0 else ()
        if number > 0:
            lines.append("the minimum-edit repair attached to the conflict at "
                         f"{_first_label(diagnostics[0])} resolves this one too")
        attached.append(replace(diagnostic, help=(*diagnostic.help, *lines),
                                suggestions=(*diagnostic.suggestions, *suggestions)))
    return attached


def _first_label(diagnostic: Diagnostic) -> str:
    step = diagnostic.data.get("step")
    arguments = [f["argument"] for f in diagnostic.data.get("core", []) if f["argument"]]
    where = f"step {step}"
    return f"{where} `{arguments[0]}`" if arguments else where


def attach_repair(diagnostics: Sequence[Diagnostic], result: RepairResult
                  ) -> tuple[list[Diagnostic], list[RepairAction]]:
    """Attach each repair action, as a machine-applicable suggestion, to the diagnostic it
    fixes (same code and step). Returns the diagnostics and the actions no diagnostic took."""
    applicability = "has-placeholders" if result.placeholders else "machine-applicable"
    used: set[int] = set()
    out: list[Diagnostic] = []
    for diagnostic in diagnostics:
        position = diagnostic.data.get("position")
        matching = [i for i, a in enumerate(result.actions)
                    if a.code == diagnostic.code and (a.position == position or a.position is None)]
        if not matching:
            out.append(diagnostic)
            continue
        used.update(matching)
        suggestions = tuple(Suggestion(result.actions[i].message, result.actions[i].edits,
                                       applicability) for i in matching)
        out.append(replace(diagnostic, suggestions=suggestions))
    rest = [a for i, a in enumerate(result.actions) if i not in used]
    return out, rest


def repair_suggestions(plan: Plan, toolset: Toolset) -> list[Diagnostic]:
    """A check phase: the plan's conflicts, with the minimum-edit repair attached."""
    return explain_conflicts(plan, toolset, with_repair=True)


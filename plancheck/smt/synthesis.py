"""Synthesis of type-correct workflows: from typed inputs to a goal tool or goal type.

For each plan length ``k = 1 .. max_steps`` the workflow is a Z3 problem: an integer per step
for the tool it calls, and for every (step, tool, required input) an integer choosing what
feeds that input -- one of the user's inputs whose type fits, or an output of an earlier step
whose tool produces a fitting type. The rules are hard constraints:

* every input of the chosen tool is bound to something of a compatible type;
* a step reads the results of at most ``toolset.max_predecessors`` earlier steps;
* every step but the last feeds a later one (no idle steps), and the last step calls the goal
  tool or produces a value of the goal type.

Models are enumerated with blocking clauses, cheapest first: the cost of a workflow is the
number of its data flows the toolset does not declare (declared flows are preferred). Within
one length and cost, workflows are sorted by their JSON text and duplicates (the same calls in
another order) are dropped, so the order is deterministic. Literal paths fit an input when the
path's extension is a storage format of the input's type (as the checker reads literals);
named inputs (``name:Type``) fit by subtyping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Param, Toolset, ToolSignature
from plancheck.ir.references import format_reference
from plancheck.smt.limits import Deadline, SolverTimeout

DEFAULT_TIMEOUT_MS = 5000
MAX_MODELS_PER_LAYER = 500

JSONPlan = list[dict[str, Any]]


class SynthesisError(ValueError):
    """The inputs or the goal do not name anything the toolset knows."""


@dataclass(frozen=True, slots=True)
class TypedInput:
    """A user input: its value as it goes into the plan, and its type (``None``: a path whose
    type is judged from its extension, as the checker judges literals)."""

    value: str
    type: str | None = None

    @property
    def extension(self) -> str | None:
        from plancheck.typecheck.types import literal_extension

        return literal_extension(self.value)


def parse_input(text: str, toolset: Toolset) -> TypedInput:
    """``PATH``, ``PATH:Type`` or ``name:Type``."""
    value, _, type_name = text.rpartition(":") if ":" in text else (text, "", "")
    if type_name and type_name in toolset.types:
        return TypedInput(value, type_name)
    if type_name and not value:
        raise SynthesisError(f"input `{text}` has no name")
    if type_name and "/" not in type_name and "." not in type_name:
        from plancheck.typecheck.names import did_you_mean

        guess = did_you_mean(type_name, sorted(toolset.types))
        hint = f"; did you mean `{guess}`?" if guess else ""
        raise SynthesisError(f"type `{type_name}` of input `{value}` is not declared{hint}")
    candidate = TypedInput(text)
    if candidate.extension is None:
        raise SynthesisError(f"input `{text}` has no type: write it as PATH.ext or NAME:Type")
    if not toolset.lattice.types_for_extension(candidate.extension):
        raise SynthesisError(f"no type of the toolset is stored as `{candidate.extension}` "
                             f"(input `{text}`); write it as NAME:Type")
    return candidate


@dataclass(frozen=True, slots=True)
class Goal:
    tool: str | None = None
    type: str | None = None


def parse_goal(text: str, toolset: Toolset) -> Goal:
    if text in toolset.tools:
        return Goal(tool=text)
    if text in toolset.types:
        return Goal(type=text)
    from plancheck.typecheck.names import did_you_mean

    guess = did_you_mean(text, sorted(toolset.tools) + sorted(toolset.types))
    hint = f"; did you mean `{guess}`?" if guess else ""
    raise SynthesisError(f"`{text}` is neither a tool nor a type of the toolset{hint}")


def input_fits(given: TypedInput, param: Param, toolset: Toolset) -> bool:
    lattice = toolset.lattice
    if given.type is not None:
        return lattice.is_subtype(given.type, param.type)
    extension = given.extension
    return extension is not None and lattice.literal_fits(extension, param.type) is True


def output_fits(output: Param, param: Param, toolset: Toolset) -> bool:
    return toolset.lattice.compat(output, param.type) is Compat.OK


def _makes_goal(tool: ToolSignature, goal: Goal, toolset: Toolset) -> bool:
    if goal.tool is not None:
        return tool.name == goal.tool
    assert goal.type is not None
    return any(toolset.lattice.compat(o, goal.type) is Compat.OK for o in tool.outputs)


@dataclass(frozen=True, slots=True)
class _Source:
    kind: str  # "input" | "output"
    index: int  # the input's index, or the producing step
    tool: int = -1  # the producing tool's id
    key: str = ""


class _Layer:
    """The Z3 problem for workflows of exactly ``k`` steps."""

    def __init__(self, k: int, inputs: Sequence[TypedInput], goal: Goal, toolset: Toolset,
                 tools: Sequence[ToolSignature], allowed: set[int] | None = None) -> None:
        self.k = k
        self.tools = tools
        self.solver = z3.Solver()
        self.step_tool = [z3.Int(f"t_{i}") for i in range(k)]
        self.choice: dict[tuple[int, int, str], tuple[Any, list[_Source]]] = {}
        uses: dict[tuple[int, int], list[Any]] = {}
        undeclared: list[Any] = []
        for variable in self.step_tool:
            domain = [t for t in range(len(tools)) if allowed is None or t in allowed]
            self.solver.add(z3.Or(*[variable == t for t in domain]))
        last = self.step_tool[k - 1]
        self.solver.add(z3.Or(*[last == t for t, tool in enumerate(tools)
                                if _makes_goal(tool, goal, toolset)]))
        for i in range(k):
            for t, tool in enumerate(tools):
                chosen = self.step_tool[i] == t
                for param in tool.inputs:
                    if not param.required:
                        continue
                    sources = [_Source("input", j) for j, given in enumerate(inputs)
                               if input_fits(given, param, toolset)]
                    sources += [_Source("output", q, u, o.name)
                                for q in range(i) for u, producer in enumerate(tools)
                                for o in producer.outputs if output_fits(o, param, toolset)]
                    # Named by index: Z3 names are UTF-8, a toolset's names need not be.
                    pick = z3.Int(f"c_{i}_{t}_{len(self.choice)}")
                    self.choice[(i, t, param.name)] = (pick, sources)
                    if not sources:
                        self.solver.add(z3.Not(chosen))
                        continue
                    self.solver.add(z3.Implies(chosen, z3.And(pick >= 0, pick < len(sources))))
                    for n, source in enumerate(sources):
                        if source.kind != "output":
                            continue
                        active = z3.And(chosen, pick == n)
                        self.solver.add(z3.Implies(active, self.step_tool[source.index]
                                                   == source.tool))
                        uses.setdefault((i, source.index), []).append(active)
                        if (tools[source.tool].name, tool.name) not in toolset.flows:
                            undeclared.append(active)
        self.uses = {edge: z3.Or(*flags) for edge, flags in uses.items()}
        limit = toolset.max_predecessors
        for i in range(k):
            edges = [u for (c, _q), u in self.uses.items() if c == i]
            if limit is not None and edges:
                self.solver.add(z3.Sum([z3.If(u, 1, 0) for u in edges]) <= limit)
        for q in range(k - 1):
            readers = [u for (c, p), u in self.uses.items() if p == q]
            self.solver.add(z3.Or(*readers) if readers else z3.BoolVal(False))
        self.cost = z3.Sum([z3.If(u, 1, 0) for u in undeclared]) if undeclared else z3.IntVal(0)

    def models(self, cost: int, deadline: Deadline, cap: int) -> list[tuple[list[int], dict[
            tuple[int, str], _Source]]]:
        found: list[tuple[list[int], dict[tuple[int, str], _Source]]] = []
        self.solver.push()
        self.solver.add(self.cost == cost)
        try:
            while len(found) < cap:
                self.solver.set("timeout", deadline.remaining_ms())
                answer = self.solver.check()
                if answer == z3.unknown:
                    raise SolverTimeout
                if answer == z3.unsat:
                    break
                model = self.solver.model()
                tools = [model.eval(v, model_completion=True).as_long() for v in self.step_tool]
                picks: dict[tuple[int, str], _Source] = {}
                same = []
                for i, t in enumerate(tools):
                    same.append(self.step_tool[i] == t)
                    for param in self.tools[t].inputs:
                        entry = self.choice.get((i, t, param.name))
                        if entry is None:
                            continue
                        pick, sources = entry
                        n = model.eval(pick, model_completion=True).as_long()
                        picks[(i, param.name)] = sources[n]
                        same.append(pick == n)
                found.append((tools, picks))
                self.solver.add(z3.Not(z3.And(*same)))
        finally:
            self.solver.pop()
        return found

    def max_cost(self) -> int:
        return self.k * max(1, max((len(t.inputs) for t in self.tools), default=1))


def _to_plan(tools: Sequence[ToolSignature], chosen: list[int],
             picks: dict[tuple[int, str], _Source], inputs: Sequence[TypedInput]) -> JSONPlan:
    plan: JSONPlan = []
    for i, t in enumerate(chosen):
        tool = tools[t]
        arguments: dict[str, Any] = {}
        content: dict[str, list[str]] = {}
        for param in tool.inputs:
            source = picks.get((i, param.name))
            if source is None:
                continue
            if source.kind == "input":
                arguments[param.name] = inputs[source.index].value
            else:
                arguments[param.name] = format_reference(source.index, source.key)
                keys = content.setdefault(str(source.index), [])
                if source.key not in keys:
                    keys.append(source.key)
        plan.append({
            "agent": tool.name,
            "step": i,
            "dependence": sorted(int(k) for k in content) or [-1],
            "dependence_content": content or None,
            "inputs": arguments,
            "outputs": list(tool.output_names),
        })
    return plan


def _signature(plan: JSONPlan, toolset: Toolset) -> tuple[str, ...]:
    """The plan's calls, independent of step order (two orders of one workflow are one)."""
    from plancheck.compiler.lowering import lower_plan
    from plancheck.diagnostics.span import Span
    from plancheck.interp.canonical import canonical_form

    lowered, _ = lower_plan(plan, Span("<synth>", pointer=""))
    assert lowered is not None
    return canonical_form(lowered, toolset)


def synthesize(
    inputs: Sequence[TypedInput | str],
    goal: Goal | str,
    toolset: Toolset,
    *,
    max_steps: int = 3,
    limit: int = 10,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    tools: Sequence[str] | None = None,
) -> Iterator[JSONPlan]:
    """Type-correct workflows from ``inputs`` to ``goal``, shortest and most conventional first.

    ``tools`` restricts the steps to these tools (the goal tool is always allowed). Raises
    :class:`SynthesisError` for an unknown goal or an untyped input, and
    :class:`~plancheck.smt.limits.SolverTimeout` when the time limit is reached before
    ``limit`` workflows (those found so far have been yielded).
    """
    typed = [i if isinstance(i, TypedInput) else parse_input(i, toolset) for i in inputs]
    target = goal if isinstance(goal, Goal) else parse_goal(goal, toolset)
    signatures = [toolset.tools[name] for name in sorted(toolset.tools)]
    allowed = None
    if tools is not None:
        wanted = set(tools) | ({target.tool} if target.tool else set())
        allowed = {i for i, t in enumerate(signatures) if t.name in wanted}
    deadline = Deadline(timeout_ms)
    seen: set[tuple[str, ...]] = set()
    produced = 0
    for k in range(1, max_steps + 1):
        if produced >= limit:
            return
        layer = _Layer(k, typed, target, toolset, signatures, allowed)
        layer.solver.set("timeout", deadline.remaining_ms())
        if layer.solver.check() == z3.unsat:
            continue
        for cost in range(layer.max_cost() + 1):
            found = layer.models(cost, deadline, MAX_MODELS_PER_LAYER)
            plans = sorted((_to_plan(signatures, t, p, typed) for t, p in found),
                           key=lambda plan: json.dumps(plan, sort_keys=True))
            for plan in plans:
                signature = _signature(plan, toolset)
                if signature in seen:
                    continue
                seen.add(signature)
                yield plan
                produced += 1
                if produced >= limit:
                    return

"""Minimum-edit repair of a plan: a weighted MaxSMT problem solved with Z3.

Only imported when a repair is asked for (``plancheck fix``, ``check --explain``); the plain
check never imports this module or z3.

The repair space
----------------
Some edits are forced and decided directly (each still costs its weight):

* **renumber** the steps 0, 1, ... in the order listed; references are re-targeted through the
  old numbers, so a consistently 1-based plan keeps its data flow, and a number no step had
  is read in the new numbering (steps numbered from 1 whose references count from 0 keep
  their references as written);
* an **unknown tool** becomes the closest tool name of the pool, or else the tool whose input
  keys best match the step's;
* an **unknown input key** is renamed to a missing input of the tool (the closest name), or
  dropped when no input is missing;
* **outputs** become exactly the tool's outputs.

The bindings are what the solver decides. Every input of every step gets exactly one option:

=====================  ======  ==============================================================
option                 weight  when offered
=====================  ======  ==============================================================
keep                   0       the binding is valid (a literal, or a reference to an output of
                               an earlier step whose type fits, implicit conversions included)
correct the key        2       another output of the same producer fits
rebind                 5       an output of another earlier step fits
bridge                 6       the referenced output is of the wrong type and one tool takes it
                               and makes the expected type: insert a step calling that tool
placeholder            12      nothing fits: write a literal ``<path to T>`` the user must fill
=====================  ======  ==============================================================

``dependence`` and ``dependence_content`` are always rewritten to what the bindings imply (a
repaired plan must check clean); each one that then differs from what the step declared costs
2 (soft constraints "keep this dependence"). The toolset's predecessor limit is a hard
constraint. The weights encode one judgement: references are the data flow and dependence
fields are metadata derived from it, so a dependence field yields before a reference does
(rebinding a valid reference, 5, costs more than rewriting both fields, 4), while a declared
dependence still decides *which* earlier output a broken or missing binding should take.
A literal is never turned into a reference, and a reference is never dropped for a literal
unless nothing fits (the placeholder).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import z3

from plancheck.diagnostics.model import Diagnostic, Edit, make
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import (
    Argument,
    Literal,
    MalformedReference,
    Param,
    Plan,
    Reference,
    Step,
    Toolset,
    ToolSignature,
)
from plancheck.ir.references import format_reference
from plancheck.smt.limits import (
    DEFAULT_TIMEOUT_MS,
    MAX_REPAIR_CANDIDATES,
    Deadline,
    SolverTimeout,
    repair_size,
    timeout_diagnostic,
    too_large_diagnostic,
)

W_RENUMBER = 1
W_TOOL_NAME = 2
W_TOOL_KEYS = 4
W_RENAME_INPUT = 2
W_DROP_INPUT = 2
W_OUTPUTS = 1
W_DEPENDENCE = 2
W_CONTENT = 2
W_KEY = 2
W_REBIND = 5
W_BRIDGE = 6
W_PLACEHOLDER = 12

JSON = Any


@dataclass(frozen=True, slots=True)
class RepairAction:
    """One decision of the repair, with the edits that carry it out."""

    code: str  # the diagnostic code of the defect it removes
    position: int | None  # the step (by position in the original plan) it concerns
    message: str
    cost: int
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True, slots=True)
class RepairResult:
    """The outcome of :func:`repair_plan`.

    ``status`` is ``"clean"`` (nothing to repair), ``"repaired"``, ``"unrepairable"`` or
    ``"timeout"``. ``plan`` is the repaired plan in the H.3 schema (also for ``"clean"``);
    ``edits`` point into the original plan.
    """

    status: str
    plan: list[dict[str, JSON]] | None
    edits: tuple[Edit, ...] = ()
    cost: int = 0
    actions: tuple[RepairAction, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def placeholders(self) -> bool:
        return any(a.code == "placeholder" for a in self.actions)

    @property
    def ok(self) -> bool:
        return self.status in ("clean", "repaired")


# --------------------------------------------------------------------------- shared helpers


def ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def compatible(output: Param, expected: str, toolset: Toolset) -> bool:
    """May this output be bound where ``expected`` is wanted without an error?"""
    return toolset.lattice.compat(output, expected) is not Compat.INCOMPATIBLE


def producer_positions(plan: Plan) -> dict[int, list[int]]:
    """Step number -> positions of the steps with that number."""
    found: dict[int, list[int]] = {}
    for step in plan.steps:
        if step.index is not None:
            found.setdefault(step.index, []).append(step.position)
    return found


def earlier_position(by_number: Mapping[int, list[int]], number: int, consumer: int) -> int | None:
    """The step a reference from ``consumer`` to ``number`` means (as name resolution does)."""
    before = [p for p in by_number.get(number, []) if p < consumer]
    return before[-1] if before else None


def repaired_position(by_number: Mapping[int, list[int]], number: int, consumer: int
                      ) -> int | None:
    """The earlier step a number written in ``consumer`` means to the repair: as name
    resolution reads it, or, when no step of the plan has that number, the step it names once
    the steps are numbered 0, 1, ... (the repaired plan's numbers)."""
    position = earlier_position(by_number, number, consumer)
    if position is None and number not in by_number and 0 <= number < consumer:
        return number
    return position


# --------------------------------------------------------------------------- the draft


@dataclass(slots=True)
class _Option:
    kind: str  # keep | key | rebind | bridge | placeholder
    cost: int
    value: JSON  # the literal, or None for a reference
    source: int | None = None  # producer position (original plan)
    key: str | None = None
    bridge: ToolSignature | None = None
    bridge_input: str | None = None
    bridge_output: str | None = None


@dataclass(slots=True)
class _Slot:
    """One input of one step, with the options the solver chooses from."""

    name: str
    original: Argument | None  # None for a required input the step did not pass
    param: Param
    options: list[_Option] = field(default_factory=list)


@dataclass(slots=True)
class _StepDraft:
    step: Step
    tool: ToolSignature
    slots: list[_Slot]
    actions: list[RepairAction]
    dropped: list[Argument]
    renamed: dict[str, str]  # original input name -> new name


def _choose_tool(step: Step, toolset: Toolset) -> tuple[ToolSignature | None, int]:
    if step.tool is not None and step.tool in toolset.tools:
        return toolset.tools[step.tool], 0
    names = sorted(toolset.tools)
    if step.tool is not None:
        lowered = {n.lower(): n for n in names}
        if step.tool.lower() in lowered:
            return toolset.tools[lowered[step.tool.lower()]], W_TOOL_NAME
        scored = sorted(((ratio(step.tool, n), n) for n in names), key=lambda t: (-t[0], t[1]))
        keys = {a.name for a in step.args}
        # A close name wins, but not over a tool whose keys match when the name is a guess.
        for score, name in scored[:3]:
            tool = toolset.tools[name]
            if score >= 0.8 or (score >= 0.6 and (not keys or keys <= set(tool.input_names))):
                return tool, W_TOOL_NAME
    keys = {a.name for a in step.args}
    if not keys:
        return None, 0
    best = max(
        names,
        key=lambda n: (
            len(keys & set(toolset.tools[n].input_names))
            / len(keys | set(toolset.tools[n].input_names)),
            ratio(step.tool or "", n),
            n,
        ),
    )
    if not keys & set(toolset.tools[best].input_names):
        return None, 0
    return toolset.tools[best], W_TOOL_KEYS


def _required(tool: ToolSignature, name: str) -> bool:
    param = tool.input(name)
    return param is not None and param.required


def _draft_step(step: Step, tool: ToolSignature, cost: int) -> _StepDraft:
    actions: list[RepairAction] = []
    if cost:
        actions.append(RepairAction(
            "PC201", step.position, f"call `{tool.name}` instead of `{step.tool}`", cost,
            (Edit(step.tool_span.pointer, tool.name),) if step.tool_span.pointer is not None
            else ()))
    given = {a.name for a in step.args}
    missing = [p.name for p in tool.inputs if p.name not in given]
    renamed: dict[str, str] = {}
    dropped: list[Argument] = []
    slots: list[_Slot] = []
    for argument in step.args:
        param = tool.input(argument.name)
        if param is None:
            open_names = [m for m in missing if m not in renamed.values()]
            required = [m for m in open_names if _required(tool, m)]
            pool = required or open_names
            target = max(pool, key=lambda m: (ratio(argument.name, m), m)) if pool else None
            if target is None:
                dropped.append(argument)
                continue
            renamed[argument.name] = target
            param = tool.input(target)
            assert param is not None
        slots.append(_Slot(param.name, argument, param))
    bound = {s.name for s in slots}
    for param in tool.inputs:
        if param.required and param.name not in bound:
            slots.append(_Slot(param.name, None, param))
    return _StepDraft(step, tool, slots, actions, dropped, renamed)


class _Drafter:
    """Builds the options of every slot (what the solver may choose)."""

    def __init__(self, plan: Plan, toolset: Toolset, drafts: list[_StepDraft]) -> None:
        self.plan = plan
        self.toolset = toolset
        self.drafts = drafts
        self.by_number = producer_positions(plan)

    def outputs_before(self, position: int) -> list[tuple[int, Param]]:
        return [(d.step.position, o) for d in self.drafts[:position] for o in d.tool.outputs]

    def fill(self, deadline: Deadline | None = None) -> None:
        for draft in self.drafts:
            if deadline is not None:
                deadline.check()
            for slot in draft.slots:
                slot.options = self.options(draft, slot)

    def options(self, draft: _StepDraft, slot: _Slot) -> list[_Option]:
        position = draft.step.position
        expected = slot.param.type
        value = slot.original.value if slot.original is not None else None
        options: list[_Option] = []
        source: int | None = None
        wanted_key: str | None = None
        if isinstance(value, Literal):
            return [_Option("keep", 0, value.value)]
        if isinstance(value, Reference):
            # (a number no step had may already say the right thing in the new numbering:
            # steps numbered from 1, references from 0)
            source = repaired_position(self.by_number, value.step, position)
            wanted_key = value.key
        elif isinstance(value, MalformedReference) and value.step is not None:
            source = earlier_position(self.by_number, value.step, position)
        fitting = [(q, o) for q, o in self.outputs_before(position)
                   if compatible(o, expected, self.toolset)]
        if source is not None:
            producer = self.drafts[source].tool
            kept = producer.output(wanted_key) if wanted_key is not None else None
            for q, output in fitting:
                if q == source and kept is not None and output.name == kept.name:
                    options.append(_Option("keep", 0, None, q, output.name))
                elif q == source:
                    options.append(_Option("key", W_KEY, None, q, output.name))
            if kept is not None and not compatible(kept, expected, self.toolset):
                bridge = self.bridge(producer, kept, draft.tool, slot.param)
                if bridge is not None:
                    tool, taken, made = bridge
                    options.append(_Option("bridge", W_BRIDGE, None, source, kept.name, tool,
                                           taken, made))
        for q, output in fitting:
            if q != source:
                options.append(_Option("rebind", W_REBIND, None, q, output.name))
        options.append(_Option("placeholder", W_PLACEHOLDER, f"<path to {expected}>"))
        return options

    def bridge(self, producer: ToolSignature, made: Param, consumer: ToolSignature,
               param: Param) -> tuple[ToolSignature, str, str] | None:
        """A tool with one required input that takes ``made`` and produces ``param``'s type."""
        found = []
        for tool in self.toolset.tools.values():
            required = [p for p in tool.inputs if p.required]
            if len(required) != 1:
                continue
            if self.toolset.lattice.compat(made, required[0].type) is not Compat.OK:
                continue
            for output in tool.outputs:
                if self.toolset.lattice.compat(output, param.type) is Compat.OK:
                    declared = ((producer.name, tool.name) in self.toolset.flows) + \
                        ((tool.name, consumer.name) in self.toolset.flows)
                    found.append((-declared, tool.name, tool, required[0].name, output.name))
                    break
        if not found:
            return None
        found.sort(key=lambda t: (t[0], t[1]))
        _, _, tool, taken, output_name = found[0]
        return tool, taken, output_name


# --------------------------------------------------------------------------- the solver


def _solve(drafts: list[_StepDraft], plan: Plan, toolset: Toolset, deadline: Deadline
           ) -> dict[tuple[int, int], _Option]:
    """Pick one option per slot, minimising the total weight (Z3 Optimize).

    No constraint or soft constraint mentions the options of two steps, so the minimum of the
    sum is the sum of each step's minimum: one small problem per step. Besides being faster,
    that keeps the time limit real: Z3 does not interrupt its 0-1 preprocessing (``elim_01``)
    for a timeout, and on one problem for a whole 250-step plan it overran a 0.5 s limit by 12 s.
    """
    by_number = producer_positions(plan)
    # A context of its own: in the shared one, which of two equally cheap choices Z3 returns
    # depended on the problems solved before in the process (a batch repaired one plan two
    # ways); in its own, the answer depends on the plan alone.
    context = z3.Context()
    picks: dict[tuple[int, int], _Option] = {}
    for draft in drafts:
        deadline.check()
        if not draft.slots:
            continue
        step_picks = _forced(draft, toolset) if all(
            len(slot.options) == 1 for slot in draft.slots) else \
            _solve_step(draft, by_number, toolset, deadline, context)
        if step_picks is None:
            return {}
        picks.update(step_picks)
    return picks


def _forced(draft: _StepDraft, toolset: Toolset) -> dict[tuple[int, int], _Option] | None:
    """The one choice of a step whose every slot has one option (most steps of a plan: their
    literals and valid references are kept), None when it breaks the predecessor limit: what
    the solver would answer, without building a problem."""
    p = draft.step.position
    picks = {(p, s): slot.options[0] for s, slot in enumerate(draft.slots)}
    limit = toolset.max_predecessors
    if limit is not None:
        sources = {o.source for o in picks.values() if o.kind != "bridge" and o.source is not None}
        used = len(sources) + sum(o.kind == "bridge" for o in picks.values())
        if used and used > limit:
            return None
    return picks


def _solve_step(draft: _StepDraft, by_number: Mapping[int, list[int]], toolset: Toolset,
                deadline: Deadline, context: z3.Context) -> dict[tuple[int, int], _Option] | None:
    """The cheapest options for one step's slots, or None when no choice satisfies the hard
    constraints (the predecessor limit).

    The problem is written as SMT-LIB text and parsed by Z3 at once: built term by term
    through Z3's Python API, a 250-step plan's problems took 2.5 s of Python, most of the
    default time limit, before Z3 solved anything."""
    p = draft.step.position
    lines: list[str] = []
    edges: dict[int, list[str]] = {}
    pairs: dict[tuple[int, str], list[str]] = {}
    bridges: list[str] = []
    for s, slot in enumerate(draft.slots):
        flags = []
        for o, option in enumerate(slot.options):
            flag = f"o_{p}_{s}_{o}"
            flags.append(flag)
            lines.append(f"(declare-const {flag} Bool)")
            if option.cost:
                lines.append(f"(assert-soft (not {flag}) :weight {option.cost} :id repair)")
            if option.kind == "bridge":
                bridges.append(flag)
            elif option.source is not None:
                edges.setdefault(option.source, []).append(flag)
                assert option.key is not None
                pairs.setdefault((option.source, option.key), []).append(flag)
        ones = " 1" * len(flags)
        lines.append(f"(assert ((_ pbeq 1{ones}) {' '.join(flags)}))" if flags else
                     "(assert false)")
    uses = {q: _any(flags) for q, flags in edges.items()}
    limit = toolset.max_predecessors
    if limit is not None and (uses or bridges):
        counted = " ".join(f"(ite {u} 1 0)" for u in (*uses.values(), *bridges))
        lines.append(f"(assert (<= (+ 0 {counted}) {limit}))" if limit >= 0 else
                     "(assert false)")
    step = draft.step
    if step.declares_dependence:
        if step.dependence is not None:
            wanted, exact = _declared_positions(step.dependence, by_number, p)
            terms = [u if q in wanted else f"(not {u})" for q, u in uses.items()]
            terms += [f"(not {b})" for b in bridges]
            if not exact or any(q not in uses for q in wanted):
                terms.append("false")
            lines.append(f"(assert-soft {_all(terms)} :weight {W_DEPENDENCE} :id repair)")
        declared = _declared_content(step, by_number) or {}
        terms = []
        for (q, k), flags in pairs.items():
            used = _any(flags)
            terms.append(used if k in declared.get(q, ()) else f"(not {used})")
        terms += [f"(not {b})" for b in bridges]
        for q, keys in declared.items():
            if any((q, k) not in pairs for k in keys):
                terms.append("false")
        lines.append(f"(assert-soft {_all(terms)} :weight {W_CONTENT} :id repair)")
    optimizer = z3.Optimize(ctx=context)
    optimizer.from_string("\n".join(lines))
    optimizer.set("timeout", deadline.remaining_ms())
    answer = optimizer.check()
    if answer == z3.unknown:
        raise SolverTimeout
    if answer != z3.sat:
        return None
    true = set(_TRUE_FLAG.findall(optimizer.model().sexpr()))
    picks: dict[tuple[int, int], _Option] = {}
    for s, slot in enumerate(draft.slots):
        for o, option in enumerate(slot.options):
            if f"o_{p}_{s}_{o}" in true:
                picks[(p, s)] = option
                break
    return picks


_TRUE_FLAG = re.compile(r"\(define-fun (o_\d+_\d+_\d+) \(\) Bool\s+true\)")


def _any(flags: list[str]) -> str:
    return f"(or {' '.join(flags)})"


def _all(terms: list[str]) -> str:
    return f"(and {' '.join(terms)})" if terms else "true"


def _declared_positions(dependence: Sequence[int], by_number: Mapping[int, list[int]],
                        consumer: int) -> tuple[set[int], bool]:
    wanted: set[int] = set()
    exact = True
    for number in dependence:
        if number == -1:
            continue
        position = repaired_position(by_number, number, consumer)
        if position is None:
            exact = False
        else:
            wanted.add(position)
    return wanted, exact


def _declared_content(step: Step, by_number: Mapping[int, list[int]]
                      ) -> dict[int, tuple[str, ...]] | None:
    """The declared content by producer position; ``None`` if it names a step that is not an
    earlier step (or is not declared at all)."""
    if step.dependence_content is None:
        return None
    found: dict[int, tuple[str, ...]] = {}
    for number, keys in step.dependence_content.items():
        position = repaired_position(by_number, number, step.position)
        if position is None:
            return {-2: ("",)}  # an entry no choice of bindings can produce
        found[position] = tuple(keys)
    return found


# --------------------------------------------------------------------------- building the plan


class _Builder:
    """Turns the chosen options into the repaired plan and the edits on the original."""

    def __init__(self, plan: Plan, drafts: list[_StepDraft], picks: dict[tuple[int, int], _Option]
                 ) -> None:
        self.plan = plan
        self.drafts = drafts
        self.picks = picks
        self.actions: list[RepairAction] = []
        # New position of every original step once bridges are inserted before their consumers.
        self.new_position: dict[int, int] = {}
        self.bridges: dict[tuple[int, int], int] = {}  # (consumer, slot) -> new bridge position
        cursor = 0
        for draft in drafts:
            p = draft.step.position
            for s, _slot in enumerate(draft.slots):
                if picks[(p, s)].kind == "bridge":
                    self.bridges[(p, s)] = cursor
                    cursor += 1
            self.new_position[p] = cursor
            cursor += 1
        self._steps = {draft.step.position: draft.step for draft in drafts}

    def _step(self, p: int) -> str:
        """Step ``p`` as the diagnostics name it (its number as written), with its number in
        the repaired plan when an inserted step or a renumbering moves it: the notes of
        `plancheck fix` sit under diagnostics that use the plan's own numbers."""
        step = self._steps[p]
        label = f"step {step.index}" if step.index is not None else f"the step at position {p}"
        new = self.new_position[p]
        return label if step.index == new else f"{label} (step {new} of the repaired plan)"

    def build(self) -> list[dict[str, JSON]]:
        result: list[dict[str, JSON]] = []
        by_number = producer_positions(self.plan)
        renumbered = [d.step for d in self.drafts
                      if d.step.index != self.new_position[d.step.position]]
        misnumbered = [d.step for d in self.drafts if d.step.index != d.step.position]
        if renumbered:
            # Numbers that only move because a step was inserted before them cost nothing more.
            self.actions.append(RepairAction(
                "PC109", None, "number the steps 0, 1, ... in the order they run"
                if misnumbered else "renumber the steps after the inserted ones",
                W_RENUMBER * len(misnumbered),
                tuple(Edit(s.index_span.pointer, self.new_position[s.position])
                      for s in renumbered if s.index_span.pointer is not None)))
        for draft in self.drafts:
            step, p = draft.step, draft.step.position
            self.actions.extend(draft.actions)
            inputs: dict[str, JSON] = {}
            for s, slot in enumerate(draft.slots):
                option = self.picks[(p, s)]
                if option.kind == "bridge":
                    result.append(self.bridge_step(draft, slot, option))
                    value: JSON = format_reference(self.bridges[(p, s)], option.bridge_output or "")
                elif option.source is not None:
                    value = format_reference(self.new_position[option.source], option.key or "")
                else:
                    value = option.value
                inputs[slot.name] = value
                self.binding_action(draft, slot, option, value)
            for argument in draft.dropped:
                self.actions.append(RepairAction(
                    "PC202", p, f"drop the input `{argument.name}`, which `{draft.tool.name}` "
                    "does not take", W_DROP_INPUT,
                    (Edit(argument.span.pointer, delete=True),)
                    if argument.span.pointer is not None else ()))
            dependence, content = _derived(inputs)
            new_step = {
                "agent": draft.tool.name,
                "step": self.new_position[p],
                "dependence": dependence,
                "dependence_content": content,
                "inputs": inputs,
                "outputs": list(draft.tool.output_names),
            }
            result.append(new_step)
            self.dependence_actions(step, dependence, content, by_number)
            # A tool call lists no outputs (nor does a step written without them outside the
            # plan schema): writing them is no repair of it, and costs nothing.
            if step.outputs != draft.tool.output_names and (
                    step.outputs is not None or step.declares_dependence):
                self.actions.append(RepairAction(
                    "PC204", p, f"list the outputs of `{draft.tool.name}` in "
                    f"{self._step(p)}", W_OUTPUTS,
                    (Edit(step.outputs_span.pointer, list(draft.tool.output_names)),)
                    if step.outputs_span.pointer is not None else ()))
        return result

    def bridge_step(self, draft: _StepDraft, slot: _Slot, option: _Option) -> dict[str, JSON]:
        assert option.bridge is not None and option.source is not None
        position = self.bridges[(draft.step.position, draft.slots.index(slot))]
        source = self.new_position[option.source]
        key = option.key or ""
        step = {
            "agent": option.bridge.name,
            "step": position,
            "dependence": [source],
            "dependence_content": {str(source): [key]},
            "inputs": {option.bridge_input or "": format_reference(source, key)},
            "outputs": list(option.bridge.output_names),
        }
        pointer = draft.step.span.pointer
        self.actions.append(RepairAction(
            "PC301", draft.step.position,
            f"insert a `{option.bridge.name}` step that turns `{key}` of "
            f"{self._step(option.source)} into the "
            f"`{slot.param.type}` that `{draft.tool.name}.{slot.name}` expects", option.cost,
            (Edit(pointer, step, insert=True),) if pointer is not None else ()))
        return step

    def binding_action(self, draft: _StepDraft, slot: _Slot, option: _Option, value: JSON
                       ) -> None:
        step, original = draft.step, slot.original
        p = step.position
        if original is None:
            pointer = _input_pointer(step, slot.name)
            what = "bind the missing input" if option.kind != "placeholder" else \
                "supply the missing input"
            self.actions.append(RepairAction(
                "placeholder" if option.kind == "placeholder" else "PC203", p,
                f"{what} `{slot.name}` of {self._step(p)} to `{value}`",
                option.cost, (Edit(pointer, value),) if pointer is not None else ()))
            return
        old_value = _binding_json(original.value)
        pointer = original.span.pointer
        if slot.name != original.name:
            new_pointer = _input_pointer(step, slot.name)
            edits: tuple[Edit, ...] = (Edit(pointer, delete=True), Edit(new_pointer, value)) \
                if pointer is not None and new_pointer is not None else ()
            also = "" if old_value == value else f" and write `{value}`"
            self.actions.append(RepairAction(
                "PC202", p, f"rename the input `{original.name}` of "
                f"{self._step(p)} to `{slot.name}`{also}",
                W_RENAME_INPUT + option.cost, edits))
            return
        if old_value == value:
            return
        edits = (Edit(pointer, value),) if pointer is not None else ()
        code = {"key": "PC208", "rebind": "PC301", "placeholder": "placeholder",
                "bridge": "PC301"}.get(option.kind, "PC109")
        verb = {"key": "use another output of the same step",
                "rebind": "take the value from another earlier step",
                "placeholder": "no earlier result fits: supply a path",
                "bridge": "route the value through the inserted step",
                "keep": "follow the new step numbers"}[option.kind]
        self.actions.append(RepairAction(
            code, p, f"{verb}: write `{value}` for `{slot.name}` of "
            f"{self._step(p)}", 0 if option.kind == "bridge" else option.cost, edits))

    def dependence_actions(self, step: Step, dependence: list[int],
                           content: dict[str, list[str]] | None,
                           by_number: Mapping[int, list[int]]) -> None:
        if not step.declares_dependence:
            return
        p = step.position
        declared = sorted(set(step.dependence)) if step.dependence is not None else None
        if declared != sorted(set(dependence)):
            semantic = self._semantic_dependence(step, by_number) != self._new_sources(dependence)
            pointer = step.dependence_span.pointer
            self.actions.append(RepairAction(
                "PC401", p, f"write dependence {dependence} in {self._step(p)}",
                W_DEPENDENCE if semantic else 0,
                (Edit(pointer, dependence),) if pointer is not None else ()))
        declared_content = None if step.dependence_content is None else {
            str(k): set(v) for k, v in step.dependence_content.items()}
        new_content = None if content is None else {k: set(v) for k, v in content.items()}
        if declared_content != new_content:
            pointer = step.dependence_content_span.pointer
            semantic = self._semantic_content(step, by_number) != new_content
            self.actions.append(RepairAction(
                "PC402", p, f"write dependence_content {_show(content)} in "
                f"{self._step(p)}", W_CONTENT if semantic else 0,
                (Edit(pointer, content),) if pointer is not None else ()))

    def _semantic_dependence(self, step: Step, by_number: Mapping[int, list[int]]) -> set[int]:
        wanted, _exact = _declared_positions(step.dependence or (), by_number, step.position)
        return {self.new_position[q] for q in wanted}

    def _semantic_content(self, step: Step, by_number: Mapping[int, list[int]]
                          ) -> dict[str, set[str]] | None:
        declared = _declared_content(step, by_number)
        if declared is None or -2 in declared:
            return None if step.dependence_content is None else {"-2": set()}
        return {str(self.new_position[q]): set(keys) for q, keys in declared.items()}

    @staticmethod
    def _new_sources(dependence: list[int]) -> set[int]:
        return {d for d in dependence if d != -1}


def _binding_json(value: Literal | Reference | MalformedReference) -> JSON:
    if isinstance(value, Literal):
        return value.value
    if isinstance(value, Reference):
        return value.raw or format_reference(value.step, value.key)
    return value.raw


def _input_pointer(step: Step, name: str) -> str | None:
    inputs = step.field_span("inputs")
    if inputs.pointer is None:
        return None
    return inputs.child(name).pointer


def _derived(inputs: Mapping[str, JSON]) -> tuple[list[int], dict[str, list[str]] | None]:
    from plancheck.ir.references import REFERENCE_RE

    content: dict[str, list[str]] = {}
    for value in inputs.values():
        match = REFERENCE_RE.match(value) if isinstance(value, str) else None
        if match:
            keys = content.setdefault(match.group(1), [])
            if match.group(2) not in keys:
                keys.append(match.group(2))
    dependence = sorted(int(k) for k in content) or [-1]
    return dependence, content or None


def _show(value: object) -> str:
    import json

    return json.dumps(value)


# --------------------------------------------------------------------------- the entry point


def repair_plan(plan: Plan, toolset: Toolset, *, timeout_ms: int = DEFAULT_TIMEOUT_MS
                ) -> RepairResult:
    """The minimum-weight repair of ``plan`` (see the module docstring for the weights)."""
    from plancheck.compiler.driver import check_in_memory

    if not plan.steps:
        return RepairResult("unrepairable", None, diagnostics=(make(
            "PC112", "an empty plan cannot be repaired", primary=plan.span, label="empty"),))
    deadline = Deadline(timeout_ms)
    size = repair_size(plan)
    if size > MAX_REPAIR_CANDIDATES:
        return RepairResult("timeout", None, diagnostics=(
            too_large_diagnostic(plan, "repair", size, MAX_REPAIR_CANDIDATES),))
    drafts: list[_StepDraft] = []
    for step in plan.steps:
        tool, cost = _choose_tool(step, toolset)
        if tool is None:
            return RepairResult("unrepairable", None, diagnostics=(make(
                "PC201", f"no tool of the pool fits the step at position {step.position}",
                primary=step.tool_span, label="no repair found",
                data={"position": step.position}),))
        drafts.append(_draft_step(step, tool, cost))
    try:
        _Drafter(plan, toolset, drafts).fill(deadline)
        picks = _solve(drafts, plan, toolset, deadline)
    except SolverTimeout:
        return RepairResult("timeout", None,
                            diagnostics=(timeout_diagnostic(plan, "repair", timeout_ms),))
    if not picks:
        return RepairResult("unrepairable", None, diagnostics=(make(
            "PC403", "no binding of the inputs satisfies the predecessor limit",
            primary=plan.span, label="no repair found"),))
    builder = _Builder(plan, drafts, picks)
    repaired = builder.build()
    actions = tuple(a for a in builder.actions if a.edits or a.cost)
    edits = tuple(e for a in actions for e in a.edits)
    cost = sum(a.cost for a in actions)
    report = check_in_memory(repaired, toolset, name="<repaired>")
    if not report.ok:
        return RepairResult("unrepairable", repaired, edits, cost, actions,
                            tuple(report.errors))
    status = "repaired" if actions else "clean"
    return RepairResult(status, repaired, edits, cost, actions)


__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "RepairAction",
    "RepairResult",
    "SolverTimeout",
    "repair_plan",
]

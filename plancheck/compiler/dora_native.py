"""DORA's own trajectories, lowered into the plan IR (see :mod:`plancheck.dora.formats`).

Each step ``{"call", "args", "obs"}`` becomes a step numbered by its place in the list (as
``trajectory[N]`` counts), named by the tool DORA's scorer reads from ``call`` (``seg_flood(a,
b)`` is ``seg.flood``); each argument a binding, ``"<key> from trajectory[N].obs"`` a
:class:`~plancheck.ir.nodes.Reference`. Every node keeps its JSON pointer, so diagnostics point
at the exact call, argument or reference.

What the IR cannot hold is kept on the :class:`DoraPlan` and checked against the tool pool by
:func:`dora_checks` (the driver runs it after the common checks):

* references nested in a list or object argument: the key must be one the producing call
  returns (``PC208``);
* the calls inside a ``tool.loop`` step: each is checked as a step of its own, with the calls
  before the loop, the loop's earlier calls (``"<key> from step[N].obs"``) and the current item
  (``"<item.x>"``, and the arguments ``bind`` injects) in scope. ``step[N]`` and ``<item.x>``
  outside a loop's calls are malformed references (``PC205``).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from plancheck.compiler.call_lists import list_problems, no_calls
from plancheck.compiler.units import PlanUnit
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import Positions
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.dora.formats import (
    ITEM_REFERENCE,
    LOOP_TOOLS,
    STEP_REFERENCE,
    find_trajectories,
    mentions_item,
    mentions_step,
    tool_name,
)
from plancheck.dora.fpof import fpof_of_code
from plancheck.dora.references import Malformed, TrajectoryReference, parse_reference
from plancheck.ir.nodes import (
    Argument,
    Binding,
    Literal,
    MalformedReference,
    Plan,
    Reference,
    Step,
    Toolset,
)
from plancheck.ir.schema import json_type_name
from plancheck.records import replace

__all__ = ["DoraPlan", "dora_checks", "dora_into_unit", "dora_units", "lower_dora"]


@dataclass(frozen=True, slots=True)
class NestedReference:
    position: int  # the call that writes it
    step: int
    key: str
    span: Span


@dataclass(frozen=True, slots=True)
class Loop:
    position: int  # the tool.loop step
    calls: Any
    pointer: str | None
    bound: tuple[str, ...]  # the argument names `bind` injects into every call


class DoraPlan(Plan):
    """A DORA trajectory's plan: its steps, and what the plan IR does not hold (references
    nested in arguments, ``tool.loop`` bodies, the trajectory's own span)."""

    __slots__ = ("loops", "nested", "root")
    _fields = (*Plan._fields, "nested", "loops", "root")

    def __init__(self, steps: tuple[Step, ...], span: Span, name: str | None = None,
                 toolset: str | None = None, nested: tuple[NestedReference, ...] = (),
                 loops: tuple[Loop, ...] = (), root: Span | None = None) -> None:
        super().__init__(steps, span, name, toolset)
        self.nested = nested
        self.loops = loops
        self.root = root

    def kind_checks(self, toolset: Toolset, found: list[Diagnostic],
                    check: Callable[[Plan, Toolset], list[Diagnostic]]) -> list[Diagnostic]:
        return dora_checks(self, toolset, found, check)

    def own_toolset(self) -> Toolset | None:
        from plancheck.corpus.dora_toolset import dora_toolset  # only for DORA's own files

        return dora_toolset()


# --------------------------------------------------------------------------- entry points


def dora_units(value: Any, file: str, positions: Positions) -> list[PlanUnit] | None:
    """One unit per trajectory of a DORA document (``None``: not a DORA document)."""
    found = find_trajectories(value)
    if found is None:
        return None
    units = []
    for trajectory in found:
        plan, diagnostics = lower_dora(trajectory.value, Span(file, pointer=trajectory.pointer),
                                       name=trajectory.name)
        diagnostics = _run_error(diagnostics, trajectory.holder)
        units.append(PlanUnit(file, trajectory.name, positions, plan=plan,
                              diagnostics=diagnostics, record_data=trajectory.holder))
    return units


def dora_into_unit(unit: PlanUnit, value: Any, root: Span) -> bool:
    """Fill ``unit`` with the trajectory of a DORA run record or of the JSON found in a
    completion; False when ``value`` is not DORA's (or holds several trajectories)."""
    found = find_trajectories(value)
    if found is None or len(found) != 1:
        return False
    (trajectory,) = found
    pointer = None if root.pointer is None else root.pointer + trajectory.pointer
    plan, diagnostics = lower_dora(trajectory.value, Span(root.file, pointer=pointer),
                                   name=trajectory.name)
    diagnostics = _run_error(diagnostics, trajectory.holder)
    unit.plan = plan
    unit.diagnostics.extend(diagnostics)
    if trajectory.name and (unit.record is None or unit.record.startswith("line ")):
        unit.record = trajectory.name
    if trajectory.holder is not None and unit.record_data is None:
        unit.record_data = trajectory.holder
    return True


def _run_error(diagnostics: list[Diagnostic], holder: dict[str, Any] | None
               ) -> list[Diagnostic]:
    """An empty trajectory of a run record that failed says why."""
    error = holder.get("error") if holder is not None else None
    if not error:
        return diagnostics
    note = f"the run recorded an error instead of an answer: {str(error)[:200]}"
    return [replace(d, notes=(*d.notes, note)) if d.code == "PC112" else d for d in diagnostics]


def lower_dora(value: Any, root: Span, *, name: str | None = None
               ) -> tuple[DoraPlan | None, list[Diagnostic]]:
    problems = list_problems(value, root, "steps")
    if problems is not None:
        return None, problems
    lowering = _Lowering(root, len(value))
    if not value:
        lowering.diagnostics.append(no_calls(root))
    steps = [lowering.step(item, i) for i, item in enumerate(value)]
    plan = DoraPlan(tuple(s for s in steps if s is not None), root, name=name,
                    nested=tuple(lowering.nested), loops=tuple(lowering.loops), root=root)
    return plan, lowering.diagnostics


# --------------------------------------------------------------------------- lowering


@dataclass(slots=True)
class _Lowering:
    root: Span
    count: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    nested: list[NestedReference] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)

    def pointer(self, *tokens: str | int) -> str | None:
        if self.root.pointer is None:
            return None
        return self.root.pointer + "".join(f"/{escape_pointer(t)}" for t in tokens)

    def span(self, *tokens: str | int) -> Span:
        pointer = self.pointer(*tokens)
        return self.root if pointer is None else Span(self.root.file, pointer=pointer)

    def step(self, item: Any, position: int) -> Step | None:
        span = self.span(position)
        if not isinstance(item, dict):
            self.diagnostics.append(make(
                "PC106", f"call {position} is not an object", primary=span,
                label="expected `{\"call\": ..., \"args\": {...}}`",
                data={"position": position}))
            return None
        call_span = self.span(position, "call") if "call" in item else span
        tool: str | None = None
        if "call" not in item:
            self.diagnostics.append(make(
                "PC107", f"call {position} names no tool", primary=span,
                label="no `call` member", help=["write the tool as `\"call\": \"seg.flood\"`"],
                data={"position": position, "fields": ["call"]}))
        elif tool_name(item["call"]):
            tool = tool_name(item["call"])
        else:
            self.diagnostics.append(make(
                "PC108", f"the `call` of call {position} must name a tool, found "
                f"{json_type_name(item['call'])}", primary=call_span,
                label="expected a tool name",
                data={"position": position, "field": "call",
                      "actual": json_type_name(item["call"])}))
        args, readable = self.arguments(item, position, tool)
        args_span = self.span(position, "args") if "args" in item else span
        return Step(position=position, index=position, tool=tool, args=args, outputs=None,
                    span=span, inputs_readable=readable,
                    stored_spans={"agent": call_span, "inputs": args_span, "step": span,
                                  "outputs": span})

    def arguments(self, item: dict[str, Any], position: int, tool: str | None
                  ) -> tuple[tuple[Argument, ...], bool]:
        raw = item.get("args")
        if raw is None:
            return (), True
        decoded = raw
        if isinstance(raw, str):
            try:
                decoded = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                decoded = raw
        if not isinstance(decoded, dict):
            self.diagnostics.append(make(
                "PC108", f"the `args` of call {position} must be an object, found "
                f"{json_type_name(raw)}", primary=self.span(position, "args"),
                label="expected an object of arguments",
                data={"position": position, "field": "args", "actual": json_type_name(raw)}))
            return (), False
        inline = decoded is raw
        args = []
        for key, value in decoded.items():
            span = self.span(position, "args", key) if inline else self.span(position, "args")
            if tool in LOOP_TOOLS and key == "calls":
                bind = decoded.get("bind")
                bound = tuple(bind) if isinstance(bind, dict) else ()
                self.loops.append(Loop(position, value, self.pointer(position, "args", key)
                                       if inline else self.pointer(position, "args"), bound))
                args.append(Argument(key, Literal(value, span), span))
                continue
            args.append(Argument(key, self.binding(value, span, position, key), span))
        return tuple(args), True

    def binding(self, value: Any, span: Span, position: int, key: str) -> Binding:
        if isinstance(value, str):
            parsed = parse_reference(value)
            if isinstance(parsed, TrajectoryReference):
                if parsed.key is not None:
                    return Reference(parsed.step, parsed.key, span, raw=value)
                self.check_step(parsed.step, span, position, key)
                return Literal(value, span)
            if isinstance(parsed, Malformed):
                self.malformed(value, span, position, key, "`<key> from trajectory[N].obs`")
                return Literal(value, span)
            if ITEM_REFERENCE.match(value) or STEP_REFERENCE.match(value) or \
                    mentions_item(value) or mentions_step(value):
                self.outside_loop(value, span, position, key)
            return Literal(value, span)
        self.walk(value, span, position, key)
        return Literal(value, span)

    def walk(self, value: Any, span: Span, position: int, key: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            self.diagnostics.append(make(
                "PC302", f"argument `{key}` of call {position} is {value!r}, which is not a "
                "number JSON can carry", primary=span, label="not a finite number",
                help=["Python's json writes NaN and Infinity, but no tool can compute with "
                      "them and strict JSON readers reject them"],
                data={"step": position, "position": position, "key": key,
                      "actual": repr(value)}))
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(item, span.child(i) if span.pointer is not None else span,
                          position, key)
        elif isinstance(value, dict):
            for member, item in value.items():
                self.walk(item, span.child(member) if span.pointer is not None else span,
                          position, key)
        elif isinstance(value, str):
            parsed = parse_reference(value)
            if isinstance(parsed, TrajectoryReference):
                if self.check_step(parsed.step, span, position, key) and parsed.key:
                    self.nested.append(NestedReference(position, parsed.step, parsed.key,
                                                       span))
            elif isinstance(parsed, Malformed):
                self.malformed(value, span, position, key, "`<key> from trajectory[N].obs`")
            elif ITEM_REFERENCE.match(value) or STEP_REFERENCE.match(value):
                self.outside_loop(value, span, position, key)

    def check_step(self, step: int, span: Span, position: int, key: str) -> bool:
        problem = call_reference_problem(step, self.count, position, key, span)
        if problem is not None:
            self.diagnostics.append(problem)
        return problem is None

    def malformed(self, value: str, span: Span, position: int, key: str, expected: str) -> None:
        self.diagnostics.append(make(
            "PC205", f"argument `{key}` of call {position} is not a reference DORA reads: "
            f"`{value}`", primary=span, label=f"expected {expected}",
            help=[f"write references as {expected}"],
            data={"step": position, "position": position, "key": key, "actual": value}))

    def outside_loop(self, value: str, span: Span, position: int, key: str) -> None:
        self.diagnostics.append(make(
            "PC205", f"argument `{key}` of call {position} uses `{value}`, which only means "
            "something inside the `calls` of a `tool.loop` step", primary=span,
            label="outside a loop",
            help=["outside a loop, refer to an earlier call as `<key> from trajectory[N].obs`"],
            data={"step": position, "position": position, "key": key, "actual": value}))


def call_reference_problem(step: int, count: int, position: int, key: str, span: Span, *,
                           written: int | None = None) -> Diagnostic | None:
    """``PC206``/``PC207`` for a reference of call ``position`` to call ``step`` (of
    ``count``) that the IR cannot hold (nested, or to a whole observation); ``written`` is
    the number as the file writes it, when it counts from 1."""
    shown = step if written is None else written
    data = {"step": position, "position": position, "key": key, "referenced_step": step}
    if step < 0 or step >= count:
        return make(
            "PC206", f"call {position} refers to trajectory[{shown}], which the trajectory "
            f"lacks", primary=span, label=f"no call {shown}",
            notes=[f"the trajectory has {count} call{'s' if count != 1 else ''}"], data=data)
    if step >= position:
        what = "itself" if step == position else f"call {shown}, which comes later"
        return make(
            "PC207", f"call {position} uses a result of {what}", primary=span,
            label="refers forward" if step != position else "refers to itself",
            help=["a call can only use results of the calls before it"], data=data)
    return None


# --------------------------------------------------------------------------- pool-aware checks


# An observation is the whole JSON a tool returns; most of its keys are never meant to be used.
_NOT_FOR_OBSERVATIONS = frozenset({"PC502"})


def dora_checks(plan: Plan, toolset: Toolset, found: list[Diagnostic],
                check: Callable[[Plan, Toolset], list[Diagnostic]]) -> list[Diagnostic]:
    """The common checks' ``found`` diagnostics of a DORA plan, less those that do not apply
    to observations, plus what :func:`lower_dora` left for the tool pool: nested references
    and loop bodies (each body checked with ``check``, the driver's common checks, passed in
    so that this module, which the driver calls, does not import it)."""
    if not isinstance(plan, DoraPlan):
        return found
    diagnostics = [d for d in found if d.code not in _NOT_FOR_OBSERVATIONS]
    diagnostics += [d for ref in plan.nested if (d := _nested(plan, ref, toolset)) is not None]
    for loop in plan.loops:
        diagnostics.extend(_loop(plan, loop, toolset, check))
    return [_with_fpof(d) for d in diagnostics]


def _with_fpof(diagnostic: Diagnostic) -> Diagnostic:
    """The diagnostic with the FPoF type and category it stands for in its ``data``."""
    found = fpof_of_code(diagnostic.code)
    if found is None:
        return diagnostic
    return replace(diagnostic, data={**diagnostic.data, "fpof_type": found[0],
                                     "fpof_category": found[1]})


def _nested(plan: DoraPlan, ref: NestedReference, toolset: Toolset) -> Diagnostic | None:
    producer = next((s for s in plan.steps if s.position == ref.step), None)
    tool = toolset.tool(producer.tool) if producer is not None and producer.tool else None
    if tool is None or not tool.outputs or ref.key in tool.output_names:
        return None
    import difflib  # only for a wrong key: not worth its import at every start-up

    guess = difflib.get_close_matches(ref.key, tool.output_names, n=1)
    return make(
        "PC208", f"call {ref.position} uses `{ref.key}` of call {ref.step}, but `{tool.name}` "
        f"returns no `{ref.key}`", primary=ref.span, label="no such key",
        help=[f"did you mean `{guess[0]}`?"] if guess else
        ["`" + tool.name + "` returns " + ", ".join(f"`{k}`" for k in tool.output_names)],
        data={"step": ref.position, "position": ref.position, "referenced_step": ref.step,
              "key": ref.key, "tool": tool.name, "allowed": list(tool.output_names),
              "suggestion": guess[0] if guess else None})


def _loop(plan: DoraPlan, loop: Loop, toolset: Toolset,
          check: Callable[[Plan, Toolset], list[Diagnostic]]) -> list[Diagnostic]:
    root = plan.root or plan.span
    where = Span(root.file, pointer=loop.pointer) if loop.pointer is not None and \
        root.pointer is not None else root
    calls = loop.calls
    if isinstance(calls, str):
        with contextlib.suppress(json.JSONDecodeError, RecursionError):
            calls = json.loads(calls)
    if not isinstance(calls, list) or not calls:
        return [make("PC108", f"the `calls` of the `tool.loop` at call {loop.position} must be "
                     f"a non-empty list of `{{\"tool\", \"args\"}}` objects, found "
                     f"{json_type_name(calls)}", primary=where, label="expected calls",
                     data={"position": loop.position, "field": "calls",
                           "actual": json_type_name(calls)})]
    body = _Body(where, loop, len(calls))
    inner = [body.step(call, i) for i, call in enumerate(calls)]
    before = tuple(s for s in plan.steps if s.position < loop.position)
    steps = before + tuple(s for s in inner if s is not None)
    found = check(Plan(steps, plan.span, name=plan.name), toolset)
    inside = where.pointer or ""
    note = (f"checked inside the `tool.loop` at call {loop.position}, whose calls are numbered "
            f"from {loop.position} here")
    kept = [replace(d, notes=(*d.notes, note)) for d in found
            if d.code not in _NOT_FOR_OBSERVATIONS and d.span is not None
            and d.span.pointer is not None and d.span.pointer.startswith(inside)
            and d.span.pointer not in body.placeholders]
    return body.diagnostics + kept


@dataclass(slots=True)
class _Body:
    """The calls of one loop, as steps numbered after the calls before the loop."""

    root: Span
    loop: Loop
    count: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    placeholders: set[str] = field(default_factory=set)

    def span(self, *tokens: str | int) -> Span:
        if self.root.pointer is None:
            return self.root
        return Span(self.root.file, pointer=self.root.pointer + "".join(
            f"/{escape_pointer(t)}" for t in tokens))

    def step(self, call: Any, index: int) -> Step | None:
        span = self.span(index)
        position = self.loop.position + index
        if not isinstance(call, dict):
            self.diagnostics.append(make(
                "PC106", f"loop call {index} of call {self.loop.position} is not an object",
                primary=span, label="expected `{\"tool\": ..., \"args\": {...}}`",
                data={"position": self.loop.position, "loop_call": index}))
            return None
        name = call.get("tool", call.get("call"))
        if isinstance(name, str) and name.startswith("functions."):
            name = name[len("functions."):]  # tool.loop drops the prefix OpenAI models add
        tool = tool_name(name) or None
        if tool is None:
            self.diagnostics.append(make(
                "PC107", f"loop call {index} of call {self.loop.position} names no tool",
                primary=span, label="no `tool` member",
                data={"position": self.loop.position, "loop_call": index, "fields": ["tool"]}))
        args: list[Argument] = []
        raw = call.get("args", {})
        if isinstance(raw, dict):
            for key, value in raw.items():
                value_span = self.span(index, "args", key)
                args.append(Argument(key, self.binding(value, value_span, index, key),
                                     value_span))
        else:
            self.diagnostics.append(make(
                "PC108", f"the `args` of loop call {index} must be an object, found "
                f"{json_type_name(raw)}", primary=self.span(index, "args"),
                label="expected an object of arguments",
                data={"position": self.loop.position, "loop_call": index, "field": "args"}))
        for bound in self.loop.bound:  # `bind` fills these from the item, every iteration
            if not any(a.name == bound for a in args):
                placeholder = self.span(index, "args", bound)
                self.placeholders.add(placeholder.pointer or "")
                args.append(Argument(bound, MalformedReference(f"<item.{bound}>", placeholder),
                                     placeholder))
        tool_span = self.span(index, "tool" if "tool" in call else "call")
        return Step(position=position, index=position, tool=tool, args=tuple(args), outputs=None,
                    span=span, stored_spans={"agent": tool_span, "inputs": span, "step": span,
                                             "outputs": span})

    def binding(self, value: Any, span: Span, index: int, key: str) -> Binding:
        if not isinstance(value, str):
            return Literal(value, span)
        match = STEP_REFERENCE.match(value)
        if match:
            step = int(match.group("step"))
            if step >= index:
                self.diagnostics.append(make(
                    "PC207", f"loop call {index} uses a result of "
                    + ("itself" if step == index else f"loop call {step}, which comes later"),
                    primary=span, label="refers forward",
                    help=["`step[N]` counts the loop's calls from 0; only earlier ones have "
                          "results"],
                    data={"position": self.loop.position, "loop_call": index, "key": key,
                          "referenced_step": step}))
                return self._placeholder(value, span)
            return Reference(self.loop.position + step, match.group("key"), span, raw=value)
        if ITEM_REFERENCE.match(value):
            return self._placeholder(value, span)
        parsed = parse_reference(value)
        if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
            if parsed.step >= self.loop.position:
                self.diagnostics.append(make(
                    "PC207", f"loop call {index} of call {self.loop.position} uses "
                    f"trajectory[{parsed.step}], which is not before the loop", primary=span,
                    label="refers forward",
                    help=["inside a loop, refer to the loop's own calls as "
                          "`<key> from step[N].obs`"],
                    data={"position": self.loop.position, "loop_call": index, "key": key,
                          "referenced_step": parsed.step}))
                return self._placeholder(value, span)
            return Reference(parsed.step, parsed.key, span, raw=value)
        return Literal(value, span)

    def _placeholder(self, value: str, span: Span) -> MalformedReference:
        # Bound at run time (the item) or already reported: it draws no diagnostic of its own.
        self.placeholders.add(span.pointer or "")
        return MalformedReference(value, span)


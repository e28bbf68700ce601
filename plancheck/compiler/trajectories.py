"""DORA-style trajectories: a list of calls read as DORA reads it.

A document that is a list of calls in DORA's reading (generic or OpenAI calls whose references
are DORA's ``<key> from trajectory[N].obs`` or DisasterBench's) is lowered by the lowering of
calls (:class:`plancheck.compiler.callshapes.CallLowering`), with two things DORA reads
differently (:class:`TrajectoryLowering`): every item of the list is a call in its place (an
item that is not an object, ``PC106``, or names no tool, ``PC107``, keeps the numbers of the
calls after it), and an argument string is read as DORA reads it (numbered from 0, or from 1
when the calls are numbered 1..K; a whole observation or a malformed mention of
``trajectory[...]`` is checked here: ``PC205``-``PC207``). Arguments are then named ones only.

:func:`reread` is the reading :func:`~plancheck.compiler.callshapes.lower_calls` is given for
whole documents (the frontends pass it): whether a document is such a trajectory is the
recogniser's (:func:`plancheck.formats.sniff.is_call_trajectory`) and, once its calls are read,
whether they are read as one (:func:`plancheck.formats.sniff.reads_as_trajectory`: their shapes
and their references).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from plancheck.compiler.call_lists import list_problems, no_calls
from plancheck.compiler.callshapes import NOT_A_CALL, CallLowering, Lowered, Parsed, below
from plancheck.diagnostics.limits import TooManyFields
from plancheck.diagnostics.model import make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.formats.ambiguity import with_other_reading
from plancheck.formats.found import FoundCall
from plancheck.formats.sniff import is_call_trajectory, reads_as_trajectory, unwrap_trajectory
from plancheck.ir.nodes import Binding, Literal, Plan, Reference, Step
from plancheck.ir.references import read_binding
from plancheck.ir.schema import json_type_name

__all__ = ["TrajectoryLowering", "lower_trajectory", "reread"]

# The shape of an item of a trajectory that is a call.
_TRAJECTORY = "trajectory"


def reread(value: Any, root: Span, name: str | None, lowering: CallLowering | None
           ) -> Lowered | None:
    """``value`` read as a trajectory when it is one (see the module docstring), else None."""
    if lowering is None:
        return lower_trajectory(value, root, name=name) if is_call_trajectory(value) else None
    return lower_trajectory(value, root, name=name) if reads_as_trajectory(
        value, lowering.calls, lowering.syntaxes, placeholders=bool(lowering.placeholders),
        positional=lowering.positional) else None


def lower_trajectory(value: Any, root: Span, *, name: str | None = None, base: int | None = None
                     ) -> Lowered:
    """The plan a DORA-style trajectory describes (a list of calls, bare or under a wrapper
    key), read as DORA reads it (see the module's docstring), and the diagnostics reading it
    raised. ``base``: the number of the first call in references (default: 1 when the calls
    are numbered 1..K, else 0)."""
    from plancheck.dora.trajectory import read_calls, reference_base

    calls, pointer = unwrap_trajectory(value)
    root = Span(root.file, pointer=(root.pointer or "") + pointer)
    problems = list_problems(calls, root, "tool calls")
    if problems is not None:
        return None, problems
    found = [with_other_reading(calls[raw.position], FoundCall(
        raw.pointer, _TRAJECTORY if raw.is_object else NOT_A_CALL, raw.name, raw.name_pointer,
        raw.arguments, raw.arguments_pointer)) for raw in read_calls(calls)]
    lowering = TrajectoryLowering(root, found, (), base=(
        reference_base(calls) if base is None else base), count=len(calls))
    if not calls:
        lowering.diagnostics.append(no_calls(root))
    try:
        lowering.read()
    except TooManyFields as error:  # arguments decoded from JSON strings past the field limit
        return None, [error.diagnostic(root)]
    return lowering.plan(name), lowering.diagnostics


@dataclass(slots=True)
class TrajectoryLowering(CallLowering):
    """The lowering of a trajectory's calls, read as DORA reads them: references are numbered
    from ``base`` and the trajectory holds ``count`` items."""

    positional_lists: ClassVar[bool] = False
    base: int = 0
    count: int = 0

    def call(self, call: FoundCall, position: int) -> list[Parsed] | None:
        if call.shape == NOT_A_CALL:
            self.tools.append(None)
            self.diagnostics.append(make(
                "PC106", f"call {position} is not an object", primary=self.span(call.pointer),
                label="expected a tool call object", data={"position": position}))
            return None
        return CallLowering.call(self, call, position)

    def tool(self, call: FoundCall, position: int, span: Span) -> str | None:
        if call.name_pointer is None and call.shape == _TRAJECTORY:
            self.diagnostics.append(make(
                "PC107", f"call {position} names no tool", primary=span,
                label="no `tool` or `name` member", data={"position": position,
                                                          "fields": ["tool"]}))
            return None
        return CallLowering.tool(self, call, position, span)

    def not_arguments(self, call: FoundCall, position: int, raw: Any, span: Span) -> None:
        what = "a string that is not a JSON object" if isinstance(call.arguments, str) \
            else json_type_name(raw)
        self.diagnostics.append(make(
            "PC108", f"the arguments of call {position} must be an object, found {what}",
            primary=span, label="expected an object of arguments",
            data={"position": position, "field": "arguments",
                  "actual": json_type_name(call.arguments)}))

    def make_plan(self, steps: tuple[Step, ...], name: str | None, labelled: bool) -> Plan:
        return Plan(steps, self.root, name=name)  # a plain plan: it binds no name to the pool

    def read_items(self, items: list[tuple[str, Any, Span]], position: int, inline: bool,
                   span: Span) -> list[Parsed]:
        return [self.argument(key, value, value_span, position, inline, span)
                for key, value, value_span in items]

    # ------------------------------------------------------------ DORA's reading of a value

    def argument(self, key: str, value: Any, span: Span, position: int, inline: bool,
                 arguments_span: Span) -> Parsed:
        """An argument of a trajectory's call, bound as DORA reads it."""
        nested: list[tuple[str, Reference]] = []
        if isinstance(value, str):
            bound = self.string(value, span, position, key)
        else:
            self.nested_references(value, span, "", position, key, nested, inline)
            bound = Literal(value, span)
        return Parsed(key, value, span, None, None if inline else arguments_span,
                      bound=bound, bound_nested=tuple(nested))

    def string(self, value: str, span: Span, position: int, key: str) -> Binding:
        from plancheck.dora.references import Malformed, TrajectoryReference, parse_reference

        parsed = parse_reference(value)
        if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
            return Reference(parsed.step - self.base, parsed.key, span, raw=value)
        if isinstance(parsed, TrajectoryReference):
            self.call_number(parsed.step, span, position, key)
        elif isinstance(parsed, Malformed):
            self.malformed(value, span, position, key)
        else:
            return read_binding(value, span)  # also reads DisasterBench `<GENERATED>-k-<key>`
        return Literal(value, span)

    def nested_references(self, value: Any, span: Span, pointer: str, position: int, key: str,
                          found: list[tuple[str, Reference]], inline: bool) -> None:
        """The references inside a list or object argument of a trajectory's call, into
        ``found`` with their JSON pointers in the argument's value; the call numbers of whole
        observations are checked here."""
        if isinstance(value, (list, dict)):
            members = enumerate(value) if isinstance(value, list) else value.items()
            for token, item in members:
                self.nested_references(item, below(span, token, inline),
                                       f"{pointer}/{escape_pointer(str(token))}", position,
                                       key, found, inline)
        elif isinstance(value, str):
            bound = self.string(value, span, position, key)
            if isinstance(bound, Reference):
                found.append((pointer, bound))

    def call_number(self, written: int, span: Span, position: int, key: str) -> None:
        """``PC206``/``PC207`` for a reference the IR cannot hold (a whole observation)."""
        from plancheck.compiler.dora_native import call_reference_problem

        problem = call_reference_problem(written - self.base, self.count, position, key, span,
                                         written=written)
        if problem is not None:
            self.diagnostics.append(problem)

    def malformed(self, value: str, span: Span, position: int, key: str) -> None:
        self.diagnostics.append(make(
            "PC205", f"argument `{key}` of call {position} mentions `trajectory[...]` but is "
            f"not a reference", primary=span, label="expected `<key> from trajectory[N].obs`",
            help=["write references as `<key> from trajectory[N].obs`"],
            data={"step": position, "position": position, "key": key, "actual": value}))

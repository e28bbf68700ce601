"""Lower a DORA-style trajectory into plancheck's plan IR, so the whole checker applies.

Each call becomes a step numbered by its place in the list; each argument a binding, where
``"<key> from trajectory[N].obs"`` is a :class:`~plancheck.ir.nodes.Reference` to output ``key``
of step ``N``. Every node keeps the JSON pointer it came from, so diagnostics point at the exact
tool name, argument or reference in the file. Checked against an MCP-style toolset (``--tools
pool.json``), a trajectory then gets the usual diagnostics: unknown tool (``PC201``), unknown or
missing argument (``PC202``, ``PC203``), reference to a missing or later call (``PC206``,
``PC207``) or to an output the call lacks (``PC208``), type mismatch (``PC301``) and literal
arguments that do not fit the parameter's JSON Schema (``PC302``).

A trajectory declares no outputs and no dependencies (they follow from the references), so the
plan-schema checks on those fields do not apply. References nested inside a list or object
argument are resolved and typed as any other (the place they fill typed by the parameter's
JSON Schema); references to a whole observation (``trajectory[N].obs``) are checked here for
the call they name (``PC206``/``PC207``) only.
"""

from __future__ import annotations

from typing import Any

from plancheck.compiler.units import PlanUnit
from plancheck.diagnostics.limits import MAX_FIELDS, TooManyFields, plan_limit
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.dora.references import Malformed, TrajectoryReference, parse_reference
from plancheck.dora.trajectory import (
    RawCall,
    decode_arguments,
    looks_like_trajectory,
    read_calls,
    reference_base,
    unwrap_trajectory,
)
from plancheck.ir.nodes import Argument, Binding, Literal, Plan, Reference, Step
from plancheck.ir.references import read_binding
from plancheck.ir.schema import json_type_name

__all__ = ["looks_like_trajectory", "lower_trajectory", "trajectory_unit"]


def lower_trajectory(value: Any, root: Span, *, name: str | None = None, base: int | None = None
                     ) -> tuple[Plan | None, list[Diagnostic]]:
    """The plan a trajectory describes, and the diagnostics reading it raised.

    ``base`` is the number of the first call in references (default: detected, see
    :func:`plancheck.dora.trajectory.reference_base`).
    """
    calls, pointer = unwrap_trajectory(value)
    root = Span(root.file, pointer=(root.pointer or "") + pointer)
    if not isinstance(calls, list):
        return None, [make("PC105", f"expected a trajectory (a JSON array of tool calls), found "
                           f"{json_type_name(calls)}", primary=root, label="not an array")]
    too_large = plan_limit(calls, root, what="calls")
    if too_large is not None:
        return None, [too_large]
    lowering = _Lowering(root, len(calls), reference_base(calls) if base is None else base)
    if not calls:
        lowering.diagnostics.append(make("PC112", "the trajectory has no calls", primary=root,
                                         label="empty"))
    try:
        steps = [lowering.step(raw) for raw in read_calls(calls, root.pointer or "")]
    except TooManyFields as error:  # arguments decoded from JSON strings past the field limit
        return None, [error.diagnostic(root)]
    return (Plan(tuple(s for s in steps if s is not None), root, name=name),
            lowering.diagnostics)


class _Lowering:
    def __init__(self, root: Span, count: int, base: int) -> None:
        self.file = root.file
        self.count = count
        self.base = base
        self.diagnostics: list[Diagnostic] = []
        self.decoded_fields = 0  # arguments read from JSON strings, which plan_limit cannot see

    def span(self, pointer: str) -> Span:
        return Span(self.file, pointer=pointer)

    def step(self, raw: RawCall) -> Step | None:
        span = self.span(raw.pointer)
        if not raw.is_object:
            self.diagnostics.append(make(
                "PC106", f"call {raw.position} is not an object", primary=span,
                label="expected a tool call object", data={"position": raw.position}))
            return None
        name_span = self.span(raw.name_pointer) if raw.name_pointer else span
        tool: str | None = None
        if raw.name_pointer is None:
            self.diagnostics.append(make(
                "PC107", f"call {raw.position} names no tool", primary=span,
                label="no `tool` or `name` member", data={"position": raw.position,
                                                          "fields": ["tool"]}))
        elif isinstance(raw.name, str) and raw.name.strip():
            tool = raw.name
        else:
            self.diagnostics.append(make(
                "PC108", f"the tool of call {raw.position} must be a non-empty string, found "
                f"{json_type_name(raw.name)}", primary=name_span, label="expected a tool name",
                data={"position": raw.position, "field": "tool",
                      "actual": json_type_name(raw.name)}))
        args, readable = self.arguments(raw)
        arguments_span = self.span(raw.arguments_pointer) if raw.arguments_pointer else span
        return Step(
            position=raw.position,
            index=raw.position,
            tool=tool,
            args=args,
            outputs=None,
            span=span,
            inputs_readable=readable,
            stored_spans={"agent": name_span, "inputs": arguments_span, "step": span,
                          "outputs": span},
        )

    def arguments(self, raw: RawCall) -> tuple[tuple[Argument, ...], bool]:
        if raw.arguments_pointer is None or raw.arguments is None:
            return (), True  # a call without arguments passes none
        span = self.span(raw.arguments_pointer)
        decoded = decode_arguments(raw.arguments)
        if not isinstance(decoded, dict):
            what = "a string that is not a JSON object" if isinstance(raw.arguments, str) \
                else json_type_name(decoded)
            self.diagnostics.append(make(
                "PC108", f"the arguments of call {raw.position} must be an object, found {what}",
                primary=span, label="expected an object of arguments",
                data={"position": raw.position, "field": "arguments",
                      "actual": json_type_name(raw.arguments)}))
            return (), False
        # Arguments decoded from a JSON string all point at that string.
        inline = not isinstance(raw.arguments, str)
        if not inline:  # counted before: the string only
            self.decoded_fields += len(decoded)
            if self.decoded_fields > MAX_FIELDS:
                raise TooManyFields(self.decoded_fields)
        args = []
        for key, value in decoded.items():
            value_span = span.child(key) if inline else span
            nested: list[tuple[str, Reference]] = []
            binding = self.binding(value, value_span, raw.position, key, nested)
            args.append(Argument(key, binding, value_span, None if inline else span,
                                 nested=tuple(nested)))
        return tuple(args), True

    def binding(self, value: Any, span: Span, position: int, key: str,
                nested: list[tuple[str, Reference]]) -> Binding:
        if isinstance(value, str):
            parsed = parse_reference(value)
            if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
                return Reference(parsed.step - self.base, parsed.key, span, raw=value)
            if isinstance(parsed, TrajectoryReference):
                self.check_step(parsed.step, span, position, key)
                return Literal(value, span)
            if isinstance(parsed, Malformed):
                self.malformed(value, span, position, key)
                return Literal(value, span)
            return read_binding(value, span)  # also reads DisasterBench `<GENERATED>-k-<key>`
        self.nested(value, span, "", position, key, nested)
        return Literal(value, span)

    def nested(self, value: Any, span: Span, pointer: str, position: int, key: str,
               found: list[tuple[str, Reference]]) -> None:
        """The references inside a list or object argument, into ``found`` with their JSON
        pointers in the argument's value (resolved and typed as any other reference is); the
        call numbers of whole observations are checked here."""
        if isinstance(value, (list, dict)):
            members = enumerate(value) if isinstance(value, list) else value.items()
            for token, item in members:
                self.nested(item, span.child(token), f"{pointer}/{escape_pointer(str(token))}",
                            position, key, found)
        elif isinstance(value, str):
            parsed = parse_reference(value)
            if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
                found.append((pointer, Reference(parsed.step - self.base, parsed.key, span,
                                                 raw=value)))
            elif isinstance(parsed, TrajectoryReference):
                self.check_step(parsed.step, span, position, key)
            elif isinstance(parsed, Malformed):
                self.malformed(value, span, position, key)
            else:
                bound = read_binding(value, span)  # a DisasterBench `<GENERATED>-k-<key>`
                if isinstance(bound, Reference):
                    found.append((pointer, bound))

    def check_step(self, written: int, span: Span, position: int, key: str) -> None:
        """``PC206``/``PC207`` for a reference the IR cannot hold (nested, whole observation)."""
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


# --------------------------------------------------------------------------- entry points


def trajectory_unit(value: Any, file: str, lines: LineIndex, region: tuple[int, int] | None
                    ) -> PlanUnit | None:
    """A plan unit for a JSON document that is a trajectory (``None`` when it is not one);
    the hook :mod:`plancheck.compiler.frontends` calls for every JSON file."""
    if not looks_like_trajectory(value):
        return None
    plan, diagnostics = lower_trajectory(value, Span(file, pointer=""))
    return PlanUnit(file, None, Positions(file, lines, json_region=region), plan=plan,
                    diagnostics=diagnostics)

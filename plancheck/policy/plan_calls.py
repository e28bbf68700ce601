"""A plan's steps as the calls policies are decided on: literals are known values, references
are explicit flows (and their values unknown until the referenced result exists)."""

from __future__ import annotations

from typing import Any

from plancheck.ir.nodes import Literal, Plan, Reference
from plancheck.policy.semantics import EXPLICIT, FlowIn, PolicyCall


def plan_calls(plan: Plan) -> list[PolicyCall]:
    """One call per step, in plan order; a reference reads the step that declares its number."""
    by_number = {step.index: step.position for step in plan.steps if step.index is not None}
    calls = []
    for step in plan.steps:
        arguments: dict[str, Any] = {}
        flows: list[FlowIn] = []
        unknown: set[str] = set()
        for argument in step.args:
            value = argument.value
            if isinstance(value, Literal):
                arguments[argument.name] = value.value
                continue
            unknown.add(argument.name)
            if isinstance(value, Reference):
                source = by_number.get(value.step)
                if source is not None and source < step.position:
                    path = (value.key, *_reference_path(value.path))
                    flows.append(FlowIn((argument.name,), source, path, EXPLICIT))
        calls.append(PolicyCall(step.position, step.tool or "", arguments, tuple(flows),
                                frozenset(unknown), f"step {step.index}"
                                if step.index is not None else ""))
    return calls


def _reference_path(path: str) -> list[str | int]:
    """``[0].name`` -> [0, "name"]: the keys below a referenced output."""
    keys: list[str | int] = []
    for part in path.replace("[", ".").replace("]", "").split("."):
        if part:
            keys.append(int(part) if part.isdigit() else part)
    return keys

"""A canonical form of a workflow, independent of step numbering and of the order of
independent branches: the multiset of the tool calls it makes, each call written as a term
over user inputs. ``equivalent(a, b)`` holds exactly when the two plans make the same calls on
the same values.
"""

from __future__ import annotations

from collections import Counter

from plancheck.dsl.ast import Plan, Toolset
from plancheck.interp.engine import SymbolicExecutor, run
from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue


def _term(value: SymbolicValue) -> str:
    if isinstance(value, InputValue):
        return value.key
    if isinstance(value, ResultValue):
        args = ",".join(f"{name}={_term(v)}" for name, v in value.arguments)
        return f"{value.tool}({args}).{value.output}"
    assert isinstance(value, UnknownValue)
    return f"?{value.token}"  # unique: an unknown never equals anything


def call_term(tool: str, arguments: dict[str, SymbolicValue]) -> str:
    args = ",".join(f"{name}={_term(value)}" for name, value in sorted(arguments.items()))
    return f"{tool}({args})"


def canonical_form(plan: Plan, toolset: Toolset | None = None) -> tuple[str, ...]:
    """The sorted tuple of the plan's call terms (with multiplicity)."""
    trace = run(plan, toolset, SymbolicExecutor(toolset))
    calls = Counter(call_term(step.tool or "?", arguments) for step, arguments, _ in trace.calls)
    return tuple(sorted(calls.elements()))


def equivalent(a: Plan, b: Plan, toolset: Toolset | None = None) -> bool:
    """True exactly when both plans compute the same values from the same inputs."""
    return canonical_form(a, toolset) == canonical_form(b, toolset)

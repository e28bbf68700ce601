"""Execute a plan step by step over values produced by a pluggable executor.

The default :class:`SymbolicExecutor` computes :mod:`plancheck.interp.values`; a
:class:`CallableExecutor` calls real Python functions registered per tool, so the same engine
replays a plan with real tools (the deterministic replay of DORA, section 3.4).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from plancheck.dsl.ast import MalformedReference, Plan, Reference, Step, Toolset
from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue


class Executor(Protocol):
    """Computes a step's outputs from its argument values."""

    def literal(self, value: Any, expected_type: str | None) -> Any: ...

    def unknown(self, reason: str) -> Any: ...

    def call(self, step: Step, tool: str, arguments: Mapping[str, Any],
             outputs: tuple[str, ...]) -> Mapping[str, Any]: ...


_unknown_tokens = itertools.count(1)


class SymbolicExecutor:
    """Builds symbolic values with provenance; never runs anything."""

    def __init__(self, toolset: Toolset | None = None) -> None:
        self.toolset = toolset

    def literal(self, value: Any, expected_type: str | None) -> SymbolicValue:
        return InputValue(value, expected_type)

    def unknown(self, reason: str) -> SymbolicValue:
        return UnknownValue(reason, next(_unknown_tokens))

    def call(self, step: Step, tool: str, arguments: Mapping[str, Any],
             outputs: tuple[str, ...]) -> Mapping[str, SymbolicValue]:
        args = tuple(sorted(arguments.items()))
        signature = self.toolset.tool(tool) if self.toolset else None
        results: dict[str, SymbolicValue] = {}
        for key in outputs:
            param = signature.output(key) if signature else None
            results[key] = ResultValue(tool, key, args, param.type if param else None,
                                       step.index)
        return results


class CallableExecutor:
    """Runs registered Python callables: ``fn(**arguments) -> {output_key: value}``."""

    def __init__(self, tools: Mapping[str, Callable[..., Mapping[str, Any]]]) -> None:
        self.tools = dict(tools)

    def literal(self, value: Any, expected_type: str | None) -> Any:
        return value

    def unknown(self, reason: str) -> Any:
        raise ExecutionError(reason)

    def call(self, step: Step, tool: str, arguments: Mapping[str, Any],
             outputs: tuple[str, ...]) -> Mapping[str, Any]:
        function = self.tools.get(tool)
        if function is None:
            raise ExecutionError(f"no callable registered for tool `{tool}`")
        produced = dict(function(**arguments))
        missing = [k for k in outputs if k not in produced]
        if missing:
            raise ExecutionError(f"`{tool}` returned no {', '.join(missing)}")
        return produced


class ExecutionError(RuntimeError):
    pass


@dataclass(slots=True)
class Event:
    """Something the interpreter noticed (turned into diagnostics by ``interp.checks``)."""

    kind: str  # "use-before-definition" | "unresolved"
    step: Step
    argument: str
    reference: Reference | MalformedReference


@dataclass(slots=True)
class Trace:
    """The result of running a plan."""

    values: dict[tuple[int, str], Any] = field(default_factory=dict)  # (step number, key)
    # Per step executed: the step, its argument values and what it produced.
    calls: list[tuple[Step, dict[str, Any], Mapping[str, Any]]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    consumed: dict[tuple[int, str], list[tuple[Step, str]]] = field(default_factory=dict)


def run(plan: Plan, toolset: Toolset | None = None, executor: Executor | None = None) -> Trace:
    """Execute the steps in the order listed; references read values already produced."""
    executor = executor or SymbolicExecutor(toolset)
    trace = Trace()
    listed = {s.index for s in plan.steps if s.index is not None}
    executed: set[int] = set()
    for step in plan.steps:
        if step.index is not None:
            # Recorded before the step runs so that a reference to itself is not "later".
            executed.add(step.index)
        if step.tool is None:
            continue
        signature = toolset.tool(step.tool) if toolset else None
        arguments: dict[str, Any] = {}
        for argument in step.args:
            value = argument.value
            if isinstance(value, Reference):
                slot = (value.step, value.key)
                if slot in trace.values:
                    arguments[argument.name] = trace.values[slot]
                    trace.consumed.setdefault(slot, []).append((step, argument.name))
                    continue
                pending = value.step in listed and value.step not in executed
                kind = "use-before-definition" if pending else "unresolved"
                trace.events.append(Event(kind, step, argument.name, value))
                arguments[argument.name] = executor.unknown(f"{value.step}.{value.key}")
            elif isinstance(value, MalformedReference):
                trace.events.append(Event("unresolved", step, argument.name, value))
                arguments[argument.name] = executor.unknown(value.raw)
            else:
                param = signature.input(argument.name) if signature else None
                arguments[argument.name] = executor.literal(value.value,
                                                            param.type if param else None)
        # A known tool makes all its outputs whatever the step lists; for an unknown tool the
        # step's own list is all there is.
        outputs = signature.output_names if signature else (step.outputs or ())
        produced = executor.call(step, step.tool, arguments, tuple(outputs))
        trace.calls.append((step, arguments, produced))
        if step.index is not None:
            for key, result in produced.items():
                trace.values[(step.index, key)] = result
    return trace

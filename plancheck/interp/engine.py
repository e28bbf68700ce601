"""Execute a plan step by step over values produced by a pluggable executor.

The default :class:`SymbolicExecutor` computes :mod:`plancheck.interp.values`; a
:class:`CallableExecutor` calls real Python functions registered per tool, so the same engine
replays a plan with real tools (the deterministic replay of DORA, section 3.4).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue
from plancheck.ir.nodes import MalformedReference, Plan, Reference, Step, Toolset
from plancheck.records import Record


class Executor(Protocol):
    """Computes a step's outputs from its argument values."""

    def literal(self, value: Any, expected_type: str | None) -> Any: ...

    def unknown(self, reason: str) -> Any: ...

    def call(self, step: Step, tool: str, arguments: Mapping[str, Any],
             outputs: tuple[str, ...]) -> Mapping[str, Any]: ...


_unknown_tokens = itertools.count(1)


def unknown_token() -> int:
    """A fresh token for an unknown value (unknowns are told apart by these; never reused)."""
    return next(_unknown_tokens)


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
    """Runs registered Python callables, one per tool: ``fn(**arguments) -> {output_key: value}``.

    Arguments are keyed by the plan's input keys; a literal is passed as written, a reference
    as the value the referenced step returned. Every failure is an :class:`ExecutionError`
    naming the step (a tool's own exception is chained to it).
    """

    def __init__(self, tools: Mapping[str, Callable[..., Mapping[str, Any]]]) -> None:
        self.tools = dict(tools)

    def literal(self, value: Any, expected_type: str | None) -> Any:
        return value

    def unknown(self, reason: str) -> Any:
        raise ExecutionError(f"{reason} has no value: no step listed earlier produced it")

    def call(self, step: Step, tool: str, arguments: Mapping[str, Any],
             outputs: tuple[str, ...]) -> Mapping[str, Any]:
        where = f"step {step.index} (`{tool}`)"
        function = self.tools.get(tool)
        if function is None:
            raise ExecutionError(f"{where}: no callable is registered for tool `{tool}`")
        try:
            returned = function(**arguments)
        except Exception as error:
            raise ExecutionError(f"{where} raised {type(error).__name__}: {error}") from error
        if not isinstance(returned, Mapping):
            raise ExecutionError(f"{where} returned {type(returned).__name__}, not a mapping "
                                 "from output keys to values")
        produced = dict(returned)
        missing = [k for k in outputs if k not in produced]
        if missing:
            raise ExecutionError(f"{where} returned no " + ", ".join(f"`{k}`" for k in missing))
        return produced


class ExecutionError(RuntimeError):
    """A plan could not be executed with real tools."""


class Event(Record):
    """Something the interpreter noticed (turned into diagnostics by ``interp.checks``);
    ``kind`` is ``use-before-definition`` or ``unresolved``."""

    __slots__ = _fields = ("kind", "step", "argument", "reference")

    def __init__(self, kind: str, step: Step, argument: str,
                 reference: Reference | MalformedReference) -> None:
        self.kind = kind
        self.step = step
        self.argument = argument
        self.reference = reference


class Trace(Record):
    """The result of running a plan: the values by (step number, key); per step executed, the
    step, its argument values and what it produced; what the interpreter noticed; and who
    consumed each value."""

    __slots__ = _fields = ("values", "calls", "events", "consumed")

    def __init__(
        self,
        values: dict[tuple[int, str], Any] | None = None,
        calls: list[tuple[Step, dict[str, Any], Mapping[str, Any]]] | None = None,
        events: list[Event] | None = None,
        consumed: dict[tuple[int, str], list[tuple[Step, str]]] | None = None,
    ) -> None:
        self.values = {} if values is None else values
        self.calls = [] if calls is None else calls
        self.events = [] if events is None else events
        self.consumed = {} if consumed is None else consumed


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
                arguments[argument.name] = executor.unknown(
                    f"step {step.index} input `{argument.name}`: output `{value.key}` of step "
                    f"{value.step}")
            elif isinstance(value, MalformedReference):
                trace.events.append(Event("unresolved", step, argument.name, value))
                arguments[argument.name] = executor.unknown(
                    f"step {step.index} input `{argument.name}`: {value.raw!r}")
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


def replay(
    plan: Plan,
    tools: Mapping[str, Callable[..., Mapping[str, Any]]],
    toolset: Toolset | None = None,
) -> dict[int, dict[str, Any]]:
    """Run a plan with real Python callables and return what each step produced.

    ``tools`` maps a tool name to ``fn(**inputs) -> {output_key: value}``. Steps run once each,
    in the order listed, and a reference passes exactly the value its step returned, so a
    replay is deterministic whenever the callables are (the deterministic replay of DORA,
    section 3.4). With a ``toolset`` every output the tool declares must be returned;
    without one, those the step lists. The plan is not checked first (``plancheck.check``
    does that); what stops execution raises :class:`ExecutionError`.

    Returns ``{step number: {output key: value}}``.
    """
    trace = run(plan, toolset, CallableExecutor(tools))
    produced: dict[int, dict[str, Any]] = {}
    for (index, key), value in trace.values.items():
        produced.setdefault(index, {})[key] = value
    return produced

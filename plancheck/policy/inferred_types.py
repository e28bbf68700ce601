"""The type check of inferred flows: a value copied from an earlier result into an input that
expects another type.

An explicit reference of the wrong type is an error (``PC301``). An inferred flow is evidence,
not a statement: the value equals an output of another type, which may be a coincidence, so
the same mismatch is a warning (``PC306``). Only ``exact`` flows are judged (a ``contained``
one carries part of a value, so no type is claimed for it), and only when the result path
names an output the producing tool declares (``path`` itself, or ``structuredContent.path``
in an MCP result); an output of no declared type fits anywhere, as it does for references.
"""

from __future__ import annotations

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.dsl.policy_ast import PathKey
from plancheck.ir.nodes import Param, Plan, Toolset, ToolSignature
from plancheck.policy.semantics import EXACT, FlowIn, PolicyCall
from plancheck.policy.trace import Trace
from plancheck.typecheck.types import reference_codes


def inferred_type_warnings(plan: Plan, toolset: Toolset, trace: Trace) -> list[Diagnostic]:
    """A ``PC306`` per exact inferred flow whose output type the input does not accept."""
    found = []
    calls = trace.calls
    for call, flow in trace.inferred():
        if flow.kind != EXACT or len(flow.argument) != 1:
            continue
        consumer = toolset.tools.get(call.tool)
        producer = toolset.tools.get(calls[flow.source].tool)
        if consumer is None or producer is None:
            continue  # an unknown tool is said elsewhere
        param = consumer.input(str(flow.argument[0]))
        output = _output_at(producer, flow.source_path)
        if param is None or output is None:
            continue
        if "PC301" in reference_codes(output, param, producer, consumer, toolset):
            found.append(_warning(plan, toolset, call, flow, calls[flow.source], param, output))
    return found


def _output_at(tool: ToolSignature, path: tuple[PathKey, ...]) -> Param | None:
    """The declared output a result path reads (None: none the tool declares)."""
    keys = [str(k) for k in path]
    if keys[:1] == ["structuredContent"]:
        keys = keys[1:]
    return tool.output(keys[0]) if keys else None


def _warning(plan: Plan, toolset: Toolset, call: PolicyCall, flow: FlowIn, source: PolicyCall,
             param: Param, output: Param) -> Diagnostic:
    lattice = toolset.lattice
    step, producer = plan.steps[call.index], plan.steps[source.index]
    argument = step.arg(param.name)
    path = ".".join(str(k) for k in flow.source_path)
    return make(
        "PC306",
        f"`{param.name}` of {call.label} `{call.tool}` equals a value returned by "
        f"{source.label} `{source.tool}` (`{path}`), {lattice.describe(output.type)}, but "
        f"expects {lattice.describe(param.type)}",
        primary=argument.span if argument is not None else step.tool_span,
        label=f"expected `{param.type}`, holds a copy of `{output.type}`",
        secondary=[(producer.tool_span, f"{source.label} `{source.tool}` returns "
                    f"`{output.name}`: `{output.type}`")],
        notes=["the flow is inferred (the value was copied, not referenced), so this is a "
               "warning; a reference of this type would be an error (PC301)"],
        data={"step": step.index, "position": call.index, "tool": call.tool,
              "key": param.name, "expected": param.type, "actual": output.type,
              "producer_step": producer.index, "producer_tool": source.tool,
              "producer_key": output.name, "from": source.label, "path": path,
              "kind": flow.kind},
    )

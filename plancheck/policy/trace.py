"""A checked transcript as a trace with provenance: the static check's counterpart of what the
guard records call by call.

When a plan was read from tool calls whose results the transcript also holds
(:mod:`.transcript`), each call becomes a :class:`PolicyCall` named by its id (``call_2``),
with its explicit references and the flows inferred from the results of the calls before it
(:func:`plancheck.policy.provenance.infer_flows`). The driver builds one per such plan; the
policy check decides its rules on it, the type check looks at its inferred flows
(:mod:`.inferred_types`), and ``--format json`` lists its flows.
"""

from __future__ import annotations

from typing import Any

from plancheck.ir.nodes import Plan
from plancheck.policy.plan_calls import plan_calls
from plancheck.policy.provenance import infer_flows
from plancheck.policy.semantics import EXPLICIT, FlowIn, PolicyCall
from plancheck.policy.transcript import call_results
from plancheck.records import FrozenRecord


class Trace(FrozenRecord):
    """The calls of a transcript with every flow into them, explicit and inferred, and how
    many of the calls have a recorded result."""

    __slots__ = _fields = ("calls", "results")

    def __init__(self, calls: list[PolicyCall], results: int) -> None:
        self.calls = calls
        self.results = results

    def flow_records(self) -> list[dict[str, Any]]:
        """Every flow as JSON: where from (call, tool, path in its result), where to (call,
        tool, argument) and how it is known (explicit, exact, contained)."""
        return [{**flow_record(flow, self.calls), "to": call.label, "to_tool": call.tool}
                for call in self.calls for flow in call.flows]

    def inferred(self) -> list[tuple[PolicyCall, FlowIn]]:
        return [(call, flow) for call in self.calls for flow in call.flows
                if flow.kind != EXPLICIT]


def flow_record(flow: FlowIn, history: list[PolicyCall]) -> dict[str, Any]:
    """One flow into a call as JSON: the argument, the earlier call (its label and tool), the
    path in its result and how the flow is known."""
    known = 0 <= flow.source < len(history)
    return {"argument": ".".join(str(k) for k in flow.argument),
            "from": history[flow.source].label if known else flow.source,
            "tool": history[flow.source].tool if known else None,
            "path": ".".join(str(k) for k in flow.source_path), "kind": flow.kind}


def transcript_trace(plan: Plan, document: Any) -> Trace | None:
    """The trace of ``plan``, read from ``document`` (the JSON its calls were found in), or
    None when the document holds no result of any of its calls (nothing to infer from)."""
    pointers = [step.span.pointer for step in plan.steps]
    ids, results = call_results(document, pointers)
    if not results:
        return None
    calls = [call if not ids[call.index] else
             PolicyCall(call.index, call.tool, call.arguments, call.flows, call.unknown,
                        ids[call.index]) for call in plan_calls(plan)]
    return Trace(infer_flows(calls, results), len(results))

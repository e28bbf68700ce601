"""Policies in an agent loop: what a guard calls per proposed call and per recorded result.

    policies = GuardPolicies("p.wf", pool)                 # or DSL text, or a PolicySet
    call, found = policies.check("call_7", "send_email", {"body": text})
    if not any(d.severity is Severity.ERROR for d in found):
        policies.accept(call)                              # the call joins the trace
    ...
    policies.record("call_7", result)                      # what it returned

Diagnostics speak the loop's terms (call ids and tool names, never step numbers), carry the
rule, its place in the policy file and the earlier calls in ``data``, and list every flow into
the call, explicit or inferred, with its kind (``data["flows"]``), so that ``--format json``
shows where each argument's value came from. Loading and deciding never import z3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.dsl.policy_ast import PathKey
from plancheck.ir.nodes import Toolset
from plancheck.policy.loader import PolicySet, load_policies
from plancheck.policy.monitor import PolicyMonitor
from plancheck.policy.report import rule_place
from plancheck.policy.semantics import EXPLICIT, FlowIn, PolicyCall, Violation
from plancheck.policy.trace import flow_record


class GuardPolicies:
    """The policies a guard enforces, with their per-rule state and the provenance index."""

    def __init__(self, policies: str | Path | PolicySet, toolset: Toolset, *,
                 provenance: bool = True) -> None:
        self.policies = load_policies(policies, toolset)  # PolicyError when unusable
        self.monitor = PolicyMonitor(self.policies, provenance=provenance)
        self.positions: dict[str, int] = {}  # each accepted call's position, by its id

    def check(self, call_id: str, tool: str, arguments: Mapping[str, Any],
              references: Mapping[str, tuple[str, tuple[PathKey, ...]]] | None = None,
              unknown: frozenset[str] = frozenset(), infer: bool = True
              ) -> tuple[PolicyCall, Sequence[Diagnostic]]:
        """The call as the next of the trace, and the diagnostics of the rules it breaks.
        ``references`` maps an argument to (the id of an earlier call, a path in its result):
        the flows the call states; ``unknown`` the arguments whose value is not known yet;
        ``infer`` false: the inferred flows are left out, unless a rule reads them."""
        flows: tuple[FlowIn, ...] = tuple(
            FlowIn((name,), self.positions[source], tuple(path), EXPLICIT)
            for name, (source, path) in references.items()
            if source in self.positions) if references else ()
        call = self.monitor.call(tool, arguments, call_id=call_id, flows=flows,
                                 unknown=unknown, infer=infer)
        if not self.policies.rules:  # provenance only: no rule to break
            return call, ()
        found = [call_diagnostic(v, call, self.monitor.history, self.policies.name)
                 for v in self.monitor.propose(call)]
        return call, found

    def accept(self, call: PolicyCall) -> None:
        self.positions[call.call_id] = call.index
        self.monitor.accept(call)

    def record(self, call_id: str, result: Any) -> None:
        """The result of accepted call ``call_id`` (unknown ids are ignored: the guard
        reports them)."""
        index = self.positions.get(str(call_id))
        if index is not None:
            self.monitor.record(index, result)

    def finish(self) -> list[Diagnostic]:
        """The rules the trace breaks as a whole, once it is complete (``require A``)."""
        history = self.monitor.history
        return [call_diagnostic(v, None, history, self.policies.name)
                for v in self.monitor.finish()]


def describe_flows(call: PolicyCall, history: list[PolicyCall]) -> list[dict[str, Any]]:
    """Every flow into ``call``, as JSON: the argument, the earlier call, the path in its
    result and how the flow is known (explicit, exact, contained)."""
    return [flow_record(flow, history) for flow in call.flows]


def call_diagnostic(violation: Violation, call: PolicyCall | None,
                    history: list[PolicyCall], policy_file: str) -> Diagnostic:
    """A violation of a call in a loop (``call`` None: of the trace as a whole)."""
    rule = violation.rule
    note, data = rule_place(rule, policy_file)
    data["earlier"] = [history[p].label for p in violation.earlier if p < len(history)]
    if call is not None:
        data["call_id"] = call.call_id
        data["tool"] = call.tool
        data["flows"] = describe_flows(call, history)
    return make(violation.code, violation.message, notes=[note], data=data,
                severity=Severity.WARNING if rule.severity == "warn" else Severity.ERROR)

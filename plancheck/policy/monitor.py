"""The online check: the rules of a policy set decided a call at a time, as a guard needs.

    monitor = PolicyMonitor(load_policies("p.wf", pool))
    found = monitor.propose(call)       # before the call runs; changes nothing
    if not any(v.blocking for v in found):
        monitor.accept(call)            # the call joins the trace
    monitor.record(call.index, result)  # its result, for provenance (optional)

State is kept per rule (:mod:`plancheck.policy.semantics`), never as a re-scan of the trace:
a verdict costs the same at call 100 as at call 1. Provenance (:mod:`.provenance`) adds the
flows the model left implicit, unless it is switched off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plancheck.policy.loader import PolicySet
from plancheck.policy.provenance import Provenance, with_inferred
from plancheck.policy.semantics import (
    FlowIn,
    PolicyCall,
    RuleState,
    Violation,
    reads_flows,
    rule_state,
)


class PolicyMonitor:
    """Per-rule state over the calls accepted so far; never raises on a call or a result."""

    def __init__(self, policies: PolicySet, *, provenance: bool = True) -> None:
        self.policies = policies
        self.states = [rule_state(rule, policies.toolset) for rule in policies.rules]
        self._firing: dict[str, list[RuleState]] = {}  # tool -> the rules a call may break
        self.history: list[PolicyCall] = []
        self.provenance = Provenance() if provenance else None
        # Whether a rule reads the flows into calls: then every call's are inferred as it is
        # proposed, and each result read as it is recorded; else only when they are asked.
        self.reads_flows = provenance and any(reads_flows(state) for state in self.states)
        # Whether each result is read as it is recorded (an agent records one while the model
        # writes its next call): when every call's flows will be asked for.
        self.read_results = self.reads_flows

    @property
    def next_index(self) -> int:
        return len(self.history)

    def call(self, tool: str, arguments: Mapping[str, Any], *, call_id: str = "",
             flows: tuple[FlowIn, ...] = (), unknown: frozenset[str] = frozenset(),
             infer: bool = True) -> PolicyCall:
        """The next call of the trace, with the flows provenance infers added to the explicit
        ones (an explicit flow into an argument wins over an inferred one); with ``infer``
        false, the explicit ones only (:meth:`inferred` adds the others when asked; no rule
        may read flows then)."""
        if self.provenance is not None and (infer or self.reads_flows):
            flows = with_inferred(self.provenance, arguments, flows)
        return PolicyCall(self.next_index, tool, arguments, flows, unknown, call_id)

    @property
    def recorded(self) -> int:
        """How many results provenance has recorded (what a call's flows are inferred from)."""
        return 0 if self.provenance is None else self.provenance.count

    def inferred(self, arguments: Mapping[str, Any], flows: tuple[FlowIn, ...],
                 recorded: int | None = None) -> tuple[FlowIn, ...]:
        """``flows`` with those provenance infers into ``arguments`` from the first
        ``recorded`` results (all by default): a call's flows asked after later results came."""
        if self.provenance is None:
            return flows
        return with_inferred(self.provenance, arguments, flows, recorded)

    def propose(self, call: PolicyCall) -> list[Violation]:
        """Every rule ``call`` would break as the next call of the trace."""
        firing = self._firing.get(call.tool)
        if firing is None:
            firing = self._firing[call.tool] = [
                s for s in self.states if s.trigger is not None and s.trigger(call.tool)]
        found = []
        for state in firing:
            violation = state.violation(call, self.history)
            if violation is not None:
                found.append(violation)
        return found

    def accept(self, call: PolicyCall) -> None:
        """Add ``call`` to the trace (its position must be :attr:`next_index`)."""
        for state in self.states:
            state.accept(call)
        self.history.append(call)

    def record(self, index: int, result: Any) -> None:
        """The result of accepted call ``index``: later arguments copied from it are flows."""
        if self.provenance is not None and 0 <= index < len(self.history):
            self.provenance.record(index, result, read=self.read_results)

    def finish(self) -> list[Violation]:
        """The violations of the trace taken as complete (``require A`` never met)."""
        return [v for v in (state.finish() for state in self.states) if v is not None]


def feedback(violations: list[Violation]) -> str:
    """Text for a model: one line per broken rule, naming the rule and the earlier calls."""
    lines = []
    for violation in violations:
        kind = "blocked" if violation.blocking else "warning"
        lines.append(f"{kind} [{violation.code}]: {violation.message}")
    return "\n".join(lines)
